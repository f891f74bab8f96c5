// Package bpfbuild compiles the project's BPF C sources with clang-19: the
// go:generate lines run its command (cmd/bpfbuild), and tests check with
// it that committed objects still build from their sources.
//
// Objects are reproducible: the module's root folder is mapped to "." in
// the paths clang records (DWARF and BTF line info), so building in
// another checkout gives the same bytes.
package bpfbuild

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/uebpf/uebpf/elf"
)

// Clang is the compiler.
const Clang = "clang-19"

// Flags are the compiler flags before the include folders, the prefix
// map, -c and -o.
var Flags = []string{"-O2", "-g", "-target", "bpf", "-mcpu=v3", "-I/usr/include/x86_64-linux-gnu"}

// Include is the module's folder of BPF headers (uebpf_helpers.h ...),
// relative to the module's root; Compile always adds it.
const Include = "examples/include"

// ModuleRoot returns the folder of the go.mod that dir is in.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside a Go module", dir)
		}
	}
}

// Args returns clang's arguments for compiling src into out, with the
// extra include folders. With a module root, clang is to run there, src
// is relative to it, and root is mapped to "." in the paths the object
// records, which clang can still open from root: the BPF backend reads
// each source line into BTF through them.
func Args(root, src, out string, includes ...string) []string {
	args := append([]string{}, Flags...)
	if root != "" {
		args = append(args, "-I"+filepath.Join(root, Include))
	}
	for _, inc := range includes {
		args = append(args, "-I"+inc)
	}
	if root != "" {
		args = append(args, "-ffile-prefix-map="+root+"=.")
	}
	return append(args, "-c", src, "-o", out)
}

// Compile builds src into out with the include folders (besides Include).
// clang runs in the module's root (in src's folder outside a module), so
// that the object does not depend on the caller's working directory nor
// on where the checkout is.
func Compile(src, out string, includes ...string) error {
	src, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	abs := make([]string, len(includes))
	for i, inc := range includes {
		if abs[i], err = filepath.Abs(inc); err != nil {
			return err
		}
	}
	dir, rel := filepath.Split(src)
	root, err := ModuleRoot(dir)
	if err != nil {
		root = "" // a source of a test's own, for instance
	} else if rel, err = filepath.Rel(root, src); err != nil {
		return err
	} else {
		dir = root
	}
	cmd := exec.Command(Clang, Args(root, rel, out, abs...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("%s: %w (install clang 19)", src, err)
		}
		return fmt.Errorf("%s %s: %w\n%s", Clang, src, err, stderr.Bytes())
	}
	return nil
}

// sameObject reports whether the committed object is the fresh one, byte
// for byte, unless a different clang built it.
func sameObject(committed, fresh string) error {
	a, err := os.ReadFile(committed)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(fresh)
	if err != nil {
		return err
	}
	if bytes.Equal(a, b) {
		return nil
	}
	ca, cb := producer(a), producer(b)
	if ca == nil || !bytes.Equal(ca, cb) {
		return nil // another compiler: the bytes may differ
	}
	return fmt.Errorf("%s is not what its source builds: run go generate in its package", committed)
}

// producer returns the compiler's name and version as the object's
// DWARF records it ("Debian clang version 19.1.7 ..."), or nil.
func producer(obj []byte) []byte {
	i := bytes.Index(obj, []byte("clang version"))
	if i < 0 {
		return nil
	}
	start := bytes.LastIndexByte(obj[:i], 0) + 1
	end := bytes.IndexByte(obj[i:], 0)
	if end < 0 {
		return nil
	}
	return obj[start : i+end]
}

// Output is the object file of src: x.bpf.c gives x.bpf.o.
func Output(src string) string {
	return src[:len(src)-len(filepath.Ext(src))] + ".o"
}

// CheckSources compiles every file matching pattern into a temporary
// folder and parses the result, failing t on any error or when the
// committed object differs from what its source builds (when both come
// from the same clang, whose version the objects' DWARF records). Without
// clang-19 on PATH it skips t.
func CheckSources(t *testing.T, pattern string, includes ...string) {
	t.Helper()
	if _, err := exec.LookPath(Clang); err != nil {
		t.Skipf("%s not on PATH: committed objects are not rebuilt", Clang)
	}
	srcs, err := filepath.Glob(pattern)
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no sources match %s", pattern)
	}
	dir := t.TempDir()
	for _, src := range srcs {
		out := filepath.Join(dir, filepath.Base(src)+".o")
		if err := Compile(src, out, includes...); err != nil {
			t.Error(err)
			continue
		}
		if _, err := elf.LoadSpec(out); err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if err := sameObject(Output(src), out); err != nil {
			t.Error(err)
		}
	}
}
