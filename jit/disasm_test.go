package jit_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// disassemble decodes code from body to the first ud2 (the end of the
// body) and returns its listing, with addresses (jump targets included)
// relative to the body; any byte sequence the decoder rejects is
// an error.
func disassemble(code []byte, body int) (string, error) {
	var s strings.Builder
	for pc := body; pc < len(code); {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			return s.String(), fmt.Errorf("offset %#x: %w", pc, err)
		}
		fmt.Fprintf(&s, "%6x  %s\n", pc-body, x86asm.IntelSyntax(inst, uint64(pc-body), nil))
		if inst.Op == x86asm.UD2 {
			break
		}
		pc += inst.Len
	}
	return s.String(), nil
}

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

// The body of every program of the benchmark set's objects decodes; with
// UEBPF_JIT_DUMP=1 the listings are written to the test log (go test -v
// -run TestBodyDecodes).
func TestBodyDecodes(t *testing.T) {
	setPrograms(t, func(name string, vp *vm.Program) {
		for _, opts := range []jit.Options{{}, {Unchecked: true}} {
			p := compile(t, vp, opts)
			code, body := jit.Code(p)
			listing, err := disassemble(code, body)
			if err != nil {
				t.Errorf("%s (unchecked %v): %v", name, opts.Unchecked, err)
			}
			if os.Getenv("UEBPF_JIT_DUMP") != "" {
				t.Logf("%s (unchecked %v), %d bytes:\n%s", name, opts.Unchecked, len(code), listing)
			}
		}
	})
}
