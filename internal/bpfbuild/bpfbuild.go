// Package bpfbuild compiles the project's BPF C sources with clang-19, for
// tests that check that committed objects still build from their sources.
package bpfbuild

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/uebpf/uebpf/elf"
)

// Clang is the compiler the go:generate lines use.
const Clang = "clang-19"

// Flags are the flags of the go:generate lines, before -I, -c and -o.
var Flags = []string{"-O2", "-g", "-target", "bpf", "-mcpu=v3", "-I/usr/include/x86_64-linux-gnu"}

// Compile builds src into out with the include folders.
func Compile(src, out string, includes ...string) error {
	args := append([]string{}, Flags...)
	for _, inc := range includes {
		args = append(args, "-I"+inc)
	}
	args = append(args, "-c", src, "-o", out)
	cmd := exec.Command(Clang, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", Clang, src, err, stderr.Bytes())
	}
	return nil
}

// CheckSources compiles every file matching pattern into a temporary
// folder and parses the result, failing t on any error. Without clang-19
// on PATH it skips t.
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
		}
	}
}
