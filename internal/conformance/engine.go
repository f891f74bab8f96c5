package conformance

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// Engine loads a program for one execution engine.
type Engine func(insns []asm.Instruction, helpers vm.Helpers) (Program, error)

// Program is a loaded program. Run calls it the way the suite expects:
// r1 = mem (0 when mem is empty), r2 = its length.
type Program interface {
	Run(mem []byte) (uint64, error)
}

// UnwindHelper is the number of the suite's one helper.
const UnwindHelper = 5

// Helpers returns the helpers the suite's programs call: helper 5
// ("unwind") returns its first argument and, when that is 0, stops the
// program at once with r0 = 0.
func Helpers() vm.Helpers {
	return vm.Helpers{UnwindHelper: {
		Name: "unwind",
		Func: func(env *vm.Env, r1, _, _, _, _ uint64) uint64 {
			if r1 == 0 {
				env.Stop(0)
			}
			return r1
		},
		Proto: &vm.Prototype{Args: [5]vm.ArgKind{vm.ArgAnything}, Ret: vm.RetInteger},
	}}
}

// Interpreter is the Engine of vm's interpreter.
func Interpreter(insns []asm.Instruction, helpers vm.Helpers) (Program, error) {
	return vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
}

// Run assembles t and runs it on engine. It returns nil when the result is
// the expected one.
func (t *Test) Run(engine Engine) error {
	insns, err := t.Instructions()
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	p, err := engine(insns, Helpers())
	if err != nil {
		return fmt.Errorf("%s: load: %w", t.Name, err)
	}
	r0, err := p.Run(append([]byte(nil), t.Mem...))
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	if t.HasResult && r0 != t.Result {
		return fmt.Errorf("%s: r0 = %#x, want %#x", t.Name, r0, t.Result)
	}
	return nil
}
