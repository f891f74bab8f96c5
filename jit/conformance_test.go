package jit_test

import (
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// compiled returns a conformance.Engine that compiles with opts.
func compiled(opts jit.Options) conformance.Engine {
	return func(insns []asm.Instruction, helpers vm.Helpers) (conformance.Program, error) {
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
		if err != nil {
			return nil, err
		}
		return jit.Compile(vp, &opts)
	}
}

var modes = []struct {
	name string
	opts jit.Options
}{
	{"checked", jit.Options{}},
	{"unchecked", jit.Options{Unchecked: true}},
	{"checked-blind", jit.Options{Blind: true}},
	{"checked-nobmi2-nomovbe", jit.Options{AMD64: jit.AMD64Options{DisableBMI2: true, DisableMOVBE: true}}},
	{"unchecked-blind-nobmi2", jit.Options{Unchecked: true, Blind: true, AMD64: jit.AMD64Options{DisableBMI2: true}}},
}

func TestConformance(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	dir, ok := conformance.SharedDir()
	if !ok {
		t.Skipf("conformance suite not found (looked at %q; set %s)", dir, conformance.EnvDir)
	}
	tests, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			passed := 0
			for _, ct := range tests {
				if err := ct.Run(compiled(m.opts)); err != nil {
					t.Error(err)
					continue
				}
				passed++
			}
			t.Logf("%d of %d conformance tests pass", passed, len(tests))
		})
	}
}
