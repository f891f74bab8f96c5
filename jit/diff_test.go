package jit_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// diffInput is what a differential run gives a program.
type diffInput struct {
	mem    []byte // context (r1, r2); copied for each engine
	packet []byte
	budget uint64
}

// outcome is what a run leaves behind.
type outcome struct {
	r0  uint64
	err string
	// executed: the instructions charged to the budget
	// (vm.Env.Executed). exact: the run ended or exceeded its budget,
	// where the engines charge the same; a run that fails otherwise may
	// end inside a stretch the interpreter has not charged yet and a
	// block the JIT has (at most the program's length apart).
	executed uint64
	exact    bool
	mem      []byte
	stack    []byte
	maps     [][]byte // memory of the program's array maps
}

func (o outcome) String() string {
	return fmt.Sprintf("r0=%#x err=%q executed=%d", o.r0, o.err, o.executed)
}

// testHelpers are the helpers differential programs call.
var testHelpers = vm.Helpers{
	1: {Name: "mix", Func: func(_ *vm.Env, r1, r2, r3, r4, r5 uint64) uint64 {
		return r1*31 ^ r2<<7 ^ r3>>3 ^ r4*0x9e3779b97f4a7c15 ^ r5
	}},
	2: {Name: "stop_if", Func: func(e *vm.Env, r1, _, _, _, _ uint64) uint64 {
		if r1&0xff == 0x42 {
			e.Stop(r1)
		}
		return r1 + 1
	}},
	5: {Name: "unwind", Func: func(e *vm.Env, r1, _, _, _, _ uint64) uint64 {
		if r1 == 0 {
			e.Stop(0)
		}
		return r1
	}},
	// lookup is an ArrayLookup helper: engines answer calls on arrays
	// themselves, and the rest (other maps, non-map pointers, unreadable
	// keys) reach this stand-in, whose result is not a pointer.
	9: {Name: "lookup", ArrayLookup: true, Func: func(_ *vm.Env, r1, r2, _, _, _ uint64) uint64 {
		return r1*3 ^ r2 ^ 0x1000
	}},
	// update is a HashUpdate helper: engines answer calls on hash maps
	// themselves, and the rest (other maps, unreadable keys or values,
	// failed updates) reach this stand-in.
	10: {Name: "update", HashUpdate: true, Func: func(_ *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
		return r1 ^ r2*5 ^ r3*7 ^ r4 ^ 0x2000
	}},
	7: {Name: "fail_if", Func: func(e *vm.Env, r1, _, _, _, _ uint64) uint64 {
		if r1&0xf == 7 {
			e.Fail(errors.New("helper failed"))
		}
		return r1 ^ 0x5555
	}},
}

// runOutcome runs p on env with a fresh copy of in.mem and a zeroed stack.
func runOutcome(p interface {
	Exec(*vm.Env) (uint64, error)
}, env *vm.Env, mem []byte, in diffInput, ms []vm.Map) outcome {
	copy(mem, in.mem)
	for _, m := range ms {
		switch m := m.(type) {
		case maps.MemoryMap:
			clear(m.Memory())
		case maps.Map:
			for _, k := range slices.Collect(mapKeys(m)) {
				m.Delete(k)
			}
		}
	}
	stack, _ := env.Bytes(engine.EnvOf(unsafe.Pointer(env)).StackLo, vm.StackSize, true)
	clear(stack)
	env.SetBudget(in.budget)
	r0, err := p.Exec(env)
	o := outcome{r0: r0, mem: bytes.Clone(mem), stack: bytes.Clone(stack)}
	o.executed, o.exact = env.Executed(), err == nil || errors.Is(err, vm.ErrBudgetExceeded)
	for _, m := range ms {
		switch m := m.(type) {
		case maps.MemoryMap:
			o.maps = append(o.maps, bytes.Clone(m.Memory()))
		case maps.Map:
			o.maps = append(o.maps, hashEntries(m))
		}
	}
	if err != nil {
		o.err = err.Error()
		var re *vm.RunError
		if !errors.As(err, &re) {
			o.err = "not a *vm.RunError: " + o.err
		}
	}
	return o
}

// diffEngines runs vp on the interpreter and on the JIT compiled with each
// of opts, on the same Env and context buffer (so that pointer values are
// the same), and reports the first difference.
func diffEngines(vp *vm.Program, in diffInput, opts ...jit.Options) error {
	env := vm.NewEnv()
	mem := guardedMem(len(in.mem))
	env.SetContext(mem)
	env.SetPacket(in.packet)
	want := runOutcome(vp, env, mem, in, vp.Maps())
	for _, o := range opts {
		p, err := jit.Compile(vp, &o)
		if err != nil {
			return fmt.Errorf("%+v: compile: %w", o, err)
		}
		got := runOutcome(p, env, mem, in, vp.Maps())
		errRun := diffRun(vp, p, in) // Run without an Env (lean_test.go)
		p.Close()
		if errRun != nil {
			return fmt.Errorf("%+v: %w", o, errRun)
		}
		switch {
		case got.r0 != want.r0 || got.err != want.err || !sameExecuted(got, want, len(vp.Instructions())):
			return fmt.Errorf("%+v: jit %v, interpreter %v", o, got, want)
		case !bytes.Equal(got.mem, want.mem):
			return fmt.Errorf("%+v: context memory differs (%v)\njit:         %x\ninterpreter: %x", o, want, got.mem, want.mem)
		case !bytes.Equal(got.stack, want.stack):
			return fmt.Errorf("%+v: stack differs (%v)\njit:         %x\ninterpreter: %x", o, want, got.stack, want.stack)
		case !slices.EqualFunc(got.maps, want.maps, bytes.Equal):
			return fmt.Errorf("%+v: maps differ (%v)\njit:         %x\ninterpreter: %x", o, want, got.maps, want.maps)
		}
	}
	return nil
}

// guardedMem returns n bytes for a context, inside a larger buffer: the
// bytes either side of it are never another region an engine allows
// (the interpreter's stack, wherever the allocator put it), so an access
// one byte past the context faults on every engine.
func guardedMem(n int) []byte { return guardedMemWithin(n, 4096) }

// guardedMemWithin is guardedMem with guard bytes either side.
func guardedMemWithin(n, guard int) []byte {
	return make([]byte, guard+n+guard)[guard : guard+n : guard+n]
}

// sameExecuted reports whether two runs that ended alike charged their
// budgets alike (see outcome.exact).
func sameExecuted(got, want outcome, slots int) bool {
	if want.exact {
		return got.executed == want.executed
	}
	return max(got.executed, want.executed)-min(got.executed, want.executed) <= uint64(slots)
}

var checkedModes = []jit.Options{
	{},
	{Blind: true},
	{AMD64: jit.AMD64Options{DisableBMI2: true, DisableMOVBE: true}},
}

var allModes = append([]jit.Options{
	{Unchecked: true},
	{Unchecked: true, Blind: true, AMD64: jit.AMD64Options{DisableBMI2: true}},
}, checkedModes...)

// diffSource assembles src and compares the engines on it.
func diffSource(t *testing.T, src string, in diffInput, opts []jit.Options) {
	t.Helper()
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	diffInsns(t, insns, in, opts)
}

func diffInsns(t *testing.T, insns []asm.Instruction, in diffInput, opts []jit.Options) {
	t.Helper()
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: testHelpers})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := diffEngines(vp, in, opts...); err != nil {
		text, _ := asm.Disassemble(insns)
		t.Fatalf("%v\nprogram:\n%s", err, text)
	}
}
