package vm_test

import (
	"bytes"
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

// FuzzLeanRun compares Run of programs without helpers, which runs lean
// (vm/lean.go), with Exec on a fresh Env: the same r0, error and context
// afterwards, run after run (the first from the pool, later ones from the
// cache), with budgets around the pinned chunk and tiny slices.
func FuzzLeanRun(f *testing.F) {
	for _, src := range []string{
		"mov %r0, 1\nexit",
		"ldxdw %r0, [%r1]\nstxdw [%r10-8], %r0\nexit",
		"mov %r0, 0\nadd %r0, 1\nja -2\nexit",
		"call local f\nexit\nf:\nstdw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit",
		"mov %r3, 3000\nsub %r3, 1\njne %r3, 0, -2\nldxdw %r0, [%r1+64]\nexit",
		"ldabsb 3\nexit",
	} {
		f.Add(asm.Encode(nil, asm.MustAssemble(src)), []byte{1, 2, 3, 4, 5, 6, 7, 8}, uint16(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, code, mem []byte, budget uint16, slice uint8) {
		insns, err := asm.Decode(code)
		if err != nil {
			return
		}
		// The two runs' stacks lie at different addresses: skip programs
		// that could see r10's value other than as an address they load
		// from or store to.
		for _, ins := range insns {
			switch ins.Class() {
			case asm.ClassALU, asm.ClassALU64, asm.ClassJMP, asm.ClassJMP32:
				if ins.Src == asm.R10 || ins.Dst == asm.R10 {
					return
				}
			case asm.ClassSTX:
				if ins.Src == asm.R10 {
					return
				}
			}
		}
		opts := &vm.Options{Budget: uint64(budget)*4 + 1}
		p, err := vm.Load(&vm.ProgramSpec{Name: "fuzz", Instructions: insns}, opts)
		if err != nil {
			return
		}
		q, err := vm.Load(&vm.ProgramSpec{Name: "fuzz", Instructions: insns}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if slice != 0 {
			defer vm.SetInterpretSlice(uint64(slice))()
		}
		env := vm.NewEnv()
		buf := make([]byte, len(mem)) // one context address for both
		for run := range 3 {
			copy(buf, mem)
			env.Reset()
			env.SetContext(buf)
			r0, err := q.Exec(env)
			want := bytes.Clone(buf)
			copy(buf, mem)
			r1, err1 := p.Run(buf)
			var re0, re1 *vm.RunError
			errors.As(err, &re0)
			errors.As(err1, &re1)
			// Fault addresses on the stacks differ.
			same := (re0 == nil) == (re1 == nil) && (re0 == nil || re0.PC == re1.PC && re0.Size == re1.Size && re0.Err == re1.Err)
			if r0 != r1 || (err == nil) != (err1 == nil) || !same || !bytes.Equal(want, buf) {
				// The whole stack is a region: an access at an address
				// computed from another (the context's) may land in one
				// run's stack and fault in the other's, as it would
				// between any two Envs.
				if wild(re0, buf) || wild(re1, buf) {
					t.Skip("an access outside the context hit one of the stacks")
				}
				t.Fatalf("run %d: Run: %d, %v, %x; Exec: %d, %v, %x", run, r1, err1, buf, r0, err, want)
			}
		}
	})
}

// wild reports whether re is a memory fault outside ctx.
func wild(re *vm.RunError, ctx []byte) bool {
	if re == nil || !errors.Is(re.Err, vm.ErrMemoryAccess) && !errors.Is(re.Err, vm.ErrReadOnly) {
		return false
	}
	lo := uint64(uintptrOf(ctx))
	return len(ctx) == 0 || re.Addr < lo || re.Addr >= lo+uint64(len(ctx))
}
