package jit_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// setPrograms calls f with each program of the benchmark set's objects,
// in order. The objects are read as files, so that these tests do not
// depend on the root package.
func setPrograms(t *testing.T, f func(name string, vp *vm.Program)) {
	t.Helper()
	objs, err := filepath.Glob("../internal/benchset/c/*.bpf.o")
	if err != nil || len(objs) == 0 {
		t.Fatalf("no objects: %v", err)
	}
	for _, obj := range objs {
		coll, err := elf.Load(obj, &elf.Options{Helpers: helpers.Standard(nil)})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
			f(name, coll.Program(name).VM)
		}
		coll.Close()
	}
}

// skipUnoptimised skips a test of an optimisation only the amd64 back
// end has (see jit.Optimised).
func skipUnoptimised(t *testing.T) {
	t.Helper()
	if !jit.Optimised {
		t.Skip("an optimisation of the amd64 back end")
	}
}
