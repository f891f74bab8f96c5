package jit_test

import (
	"runtime"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// compiled returns a conformance.Engine that compiles with opts. With
// direct, programs run through their Direct func where they have one,
// and *directs counts them.
func compiled(opts jit.Options, direct bool, directs *int) conformance.Engine {
	return func(insns []asm.Instruction, helpers vm.Helpers) (conformance.Program, error) {
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
		if err != nil {
			return nil, err
		}
		p, err := jit.Compile(vp, &opts)
		if err != nil || !direct || p.Direct() == nil {
			return p, err
		}
		*directs++
		return directProgram{p}, nil
	}
}

// directProgram runs a program through its Direct func.
type directProgram struct{ *jit.Program }

func (p directProgram) Run(mem []byte) (uint64, error) { return p.Direct()(mem) }

var modes = []struct {
	name   string
	opts   jit.Options
	direct bool // through Program.Direct where there is one
}{
	{"checked", jit.Options{}, false},
	{"unchecked", jit.Options{Unchecked: true}, false},
	{"checked-blind", jit.Options{Blind: true}, false},
	{"checked-nobmi2-nomovbe", jit.Options{AMD64: jit.AMD64Options{DisableBMI2: true, DisableMOVBE: true}}, false},
	{"unchecked-blind-nobmi2", jit.Options{Unchecked: true, Blind: true, AMD64: jit.AMD64Options{DisableBMI2: true}}, false},
	{"checked-direct", jit.Options{}, true},
	{"unchecked-blind-direct", jit.Options{Unchecked: true, Blind: true}, true},
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
			passed, directs := 0, 0
			for _, ct := range tests {
				if err := ct.Run(compiled(m.opts, m.direct, &directs)); err != nil {
					t.Error(err)
					continue
				}
				passed++
			}
			t.Logf("%d of %d conformance tests pass", passed, len(tests))
			if m.direct {
				// Most of the suite is flat and stackless: on amd64
				// a good share of it runs through the direct entry.
				t.Logf("%d through Program.Direct", directs)
				if runtime.GOARCH == "amd64" && directs < 150 {
					t.Errorf("only %d programs with a direct entry", directs)
				}
			}
		})
	}
}
