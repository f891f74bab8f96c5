package vm_test

import (
	"errors"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// fuzzHelpers give fuzzed programs helpers that exercise the Env: stopping,
// callbacks, tail calls into themselves and memory access through Bytes.
func fuzzHelpers() vm.Helpers {
	return vm.Helpers{
		// Calls on the array map are answered inline; others reach Func.
		5: {Name: "lookup", ArrayLookup: true, Func: func(env *vm.Env, _, _, _, _, _ uint64) uint64 { return 0 }},
		1: {Name: "stop_if_zero", Func: func(env *vm.Env, r1, _, _, _, _ uint64) uint64 {
			if r1 == 0 {
				env.Stop(0)
			}
			return r1
		}},
		2: {Name: "callback", Func: func(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
			r0, err := env.CallFunction(r1, [5]uint64{r2})
			if err != nil {
				return 1<<64 - 1
			}
			return r0
		}},
		3: {Name: "tail_call_self", Func: func(env *vm.Env, _, _, _, _, _ uint64) uint64 {
			if env.TailCall(env.Program()) {
				return 0
			}
			return 1
		}},
		4: {Name: "checksum", Func: func(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
			b, ok := env.Bytes(r1, r2&0xfff, false)
			if !ok {
				return 0
			}
			var sum uint64
			for _, c := range b {
				sum += uint64(c)
			}
			return sum
		}},
	}
}

// FuzzDecodeRun loads arbitrary bytecode and runs whatever loads with
// arbitrary memory: no input may panic, crash or run past the budget.
func FuzzDecodeRun(f *testing.F) {
	for _, src := range []string{
		"mov %r0, 1\nexit",
		"ldxdw %r0, [%r1]\nexit",
		"mov %r0, 0\nja -1\nexit",
		"stdw [%r10-8], 1\nmov %r1, 1\nlock fetch add [%r10-8], %r1\nmov %r0, %r1\nexit",
		"call local f\nexit\nf:\nmov %r1, 0\ncall 1\nexit",
		"mov %r1, %r10\nadd %r1, -16\nmov %r2, 16\ncall 4\nexit",
		"call 3\nexit",
		"stw [%r10-4], 2\nmov %r2, %r10\nadd %r2, -4\nlddw %r1, map_by_fd(0)\ncall 5\njeq %r0, 0, +1\nldxdw %r0, [%r0]\nexit",
	} {
		f.Add(asm.Encode(nil, asm.MustAssemble(src)), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	}
	helpers := fuzzHelpers()
	// Programs may reference map 0 (lddw src=1 imm=0), an array that
	// helper 5 looks up inline, or its memory (src=2).
	array, err := maps.New(&maps.Spec{Name: "array", Type: maps.Array, KeySize: 4, ValueSize: 12, MaxEntries: 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, code, mem []byte) {
		insns, err := asm.Decode(code)
		if err != nil {
			return
		}
		p, err := vm.Load(&vm.ProgramSpec{Name: "fuzz", Instructions: insns, Maps: []vm.Map{array}},
			&vm.Options{Helpers: helpers, Budget: 100_000})
		if err != nil {
			var le *vm.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("load error is not a *LoadError: %v", err)
			}
			return
		}
		_, err = p.Run(mem)
		var re *vm.RunError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("run error is not a *RunError: %v", err)
		}
	})
}
