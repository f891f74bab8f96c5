// Command bpfbuild compiles BPF C sources into the objects the repository
// commits, with the project's clang flags; the go:generate lines run it:
//
//	//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild [-I DIR]... PATTERN...
//
// Each PATTERN is a file or a glob (go generate runs no shell), relative
// to the package's folder; x.bpf.c is compiled into x.bpf.o beside it.
// The module's examples/include is always on the include path, and the
// objects do not depend on where the checkout is (see package bpfbuild).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uebpf/uebpf/internal/bpfbuild"
)

// includes collects -I flags.
type includes []string

func (i *includes) String() string     { return strings.Join(*i, " ") }
func (i *includes) Set(s string) error { *i = append(*i, s); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "bpfbuild: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("bpfbuild", flag.ContinueOnError)
	var incs includes
	fs.Var(&incs, "I", "add `dir` to the include path (besides examples/include)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no sources: bpfbuild [-I DIR]... PATTERN...")
	}
	for _, pattern := range fs.Args() {
		srcs, err := filepath.Glob(pattern)
		if err != nil {
			return fmt.Errorf("%s: %w", pattern, err)
		}
		if len(srcs) == 0 {
			return fmt.Errorf("%s: no such source", pattern)
		}
		for _, src := range srcs {
			if filepath.Ext(src) != ".c" {
				return fmt.Errorf("%s: not a C source", src)
			}
			if err := bpfbuild.Compile(src, bpfbuild.Output(src), incs...); err != nil {
				return err
			}
		}
	}
	return nil
}
