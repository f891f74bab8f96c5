package bpfbuild

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSameObject(t *testing.T) {
	const a, b = "../../elf/testdata/loader.bpf.o", "../../elf/testdata/errors.bpf.o"
	if err := sameObject(a, a); err != nil {
		t.Errorf("an object and itself: %v", err)
	}
	if err := sameObject(a, b); err == nil || !strings.Contains(err.Error(), "go generate") {
		t.Errorf("two objects of one compiler: %v, want an error", err)
	}
	// Without a producer, nothing says the compilers are the same.
	junk := filepath.Join(t.TempDir(), "junk.o")
	os.WriteFile(junk, []byte("not an object"), 0o644)
	if err := sameObject(junk, a); err != nil {
		t.Errorf("junk: %v", err)
	}
}

func TestArgs(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil || !filepath.IsAbs(root) {
		t.Fatalf("ModuleRoot = %s, %v", root, err)
	}
	args := Args(root, "x.bpf.c", "x.bpf.o", "extra")
	for _, want := range []string{"-ffile-prefix-map=" + root + "=.", "-I" + filepath.Join(root, Include), "-Iextra", "-c", "x.bpf.c", "x.bpf.o"} {
		if !slices.Contains(args, want) {
			t.Errorf("Args lacks %q: %q", want, args)
		}
	}
	// Outside a module: no map, no module include folder.
	if args := Args("", "x.bpf.c", "x.bpf.o"); slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "-ffile-prefix-map") || strings.HasSuffix(a, Include)
	}) {
		t.Errorf("Args outside a module: %q", args)
	}
	if got := Output("c/prime.bpf.c"); got != "c/prime.bpf.o" {
		t.Errorf("Output = %s", got)
	}
	if _, err := ModuleRoot("/"); err == nil {
		t.Error("ModuleRoot(/): no error")
	}
}
