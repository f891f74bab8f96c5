package workload

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

//go:embed testdata/workload.c
var source []byte

// compilers are tried in this order: the host's cc, then those the
// project's CI installs.
var compilers = []string{"cc", "gcc", "clang", "clang-19"}

// Build compiles testdata/workload.c into a temporary folder of tb's and returns
// the program's path; it skips tb when no C compiler is installed.
func Build(tb testing.TB) string {
	tb.Helper()
	var cc string
	for _, c := range compilers {
		if p, err := exec.LookPath(c); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		tb.Skip("no C compiler (cc, gcc or clang) to build the workload")
	}
	dir := tb.TempDir()
	src := filepath.Join(dir, "workload.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "workload")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-o", bin, src).CombinedOutput(); err != nil {
		tb.Fatalf("%s workload.c: %v\n%s", cc, err, out)
	}
	return bin
}
