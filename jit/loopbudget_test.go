package jit_test

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// budgetLoopShapes are loops the compilers run with one budget test
// per iteration (compile_loopbudget.go), on a 64-byte context of words
// 1, 2, 3, ... (the first word 5: a count or a step).
var budgetLoopShapes = []struct {
	name, src string
	fails     string // the interpreter's error, when the run faults
	loops     int    // budget loops (0: 1)
	// hoisted: checked code hoists the loop's checks instead
	// (compile_hoist.go), so that only unchecked code has a budget loop.
	hoisted bool
}{{
	name: "counted, conditional back edge",
	src: `	mov %r0, 0
		mov %r2, 0
	head:
		add %r0, %r2
		mul %r0, 3
		add %r2, 1
		jlt %r2, 9, head
		exit`,
}, {
	name: "goto back edge, test at the top",
	src: `	mov %r0, 7
		mov %r2, 0
	head:
		jeq %r2, 8, out
		xor %r0, %r2
		add %r0, 11
		add %r2, 1
		ja head
	out:
		exit`,
}, {
	name: "entered in the middle (clang's rotated while)",
	src: `	mov %r0, 0
		mov %r2, 0
		ja mid
	head:
		add %r0, %r2
		lsh %r0, 1
	mid:
		add %r2, 1
		jne %r2, 9, head
		exit`,
}, {
	// log2_int's body: selects, the last one on the back edge.
	name: "selects",
	src: `	mov %r2, 0
		mov %r0, 0
		ldxdw %r5, [%r1+0]
	head:
		mov %r3, %r1
		add %r3, %r2
		ldxdw %r6, [%r3+0]
		mul %r6, 0x9e3779b1
		mov32 %r7, 1
		jgt %r6, 0xffffffff, +1
		mov32 %r7, 0
		lsh %r7, 5
		rsh %r6, %r7
		mov32 %r8, 1
		jgt %r6, 0xffff, +1
		mov32 %r8, 0
		add %r0, %r7
		add %r0, %r8
		add %r2, %r5
		add %r2, 3
		jgt %r2, 56, out
		jgt %r6, 3, head
		mov32 %r9, 0
		ja head
	out:
		exit`,
}, {
	// log2_int as clang compiles it, over the context's 8 words: entered
	// in the middle, selects of a 0 or 1 after a mov of the other, on a
	// register comparison and a jlt (adc) and on two immediates (sbb),
	// and the back edge's goto select.
	name: "log2_int",
	src: `	mov %r2, 0
		lddw %r3, 0xffffffff
		mov %r4, 0
		ja mid
	head:
		lsh %r5, 1
		rsh %r6, %r5
		rsh %r6, 1
		or %r0, %r6
		or %r0, %r7
		or %r0, %r8
		or %r0, %r9
		or %r0, %r5
		add %r0, %r4
		add %r2, 8
		mov %r4, %r0
		jeq %r2, 64, out
	mid:
		mov %r5, %r1
		add %r5, %r2
		ldxdw %r6, [%r5+0]
		mul %r6, 0x7654321
		mov32 %r5, 1
		mov32 %r0, 1
		jgt %r6, %r3, +1
		mov32 %r0, 0
		lsh %r0, 5
		rsh %r6, %r0
		mov32 %r7, 1
		jgt %r6, 0xffff, +1
		mov32 %r7, 0
		lsh %r7, 4
		rsh %r6, %r7
		mov32 %r8, 1
		jgt %r6, 0xff, +1
		mov32 %r8, 0
		lsh %r8, 3
		rsh %r6, %r8
		mov32 %r9, 0
		jlt %r6, 0x10, +1
		mov32 %r9, 1
		lsh %r9, 2
		rsh %r6, %r9
		jgt %r6, 3, head
		mov32 %r5, 0
		ja head
	out:
		exit`,
	hoisted: true,
}, {
	name: "early exit, the return inside the loop",
	src: `	mov %r0, 0
		mov %r2, 0
		ldxdw %r5, [%r1+0]
	head:
		mov %r3, %r1
		add %r3, %r2
		ldxdw %r4, [%r3+0]
		jeq %r4, 6, found
		add %r0, %r4
		add %r2, %r5
		add %r2, 3
		jlt %r2, 64, head
		exit
	found:
		mov %r0, %r2
		exit`,
}, {
	name: "early exit and a jump out backwards",
	src: `	mov %r0, 0
		mov %r2, 0
		ja head
	back:
		add %r0, 100
		ja next
	head:
		add %r2, 1
		jeq %r2, 3, back
	next:
		add %r0, %r2
		jgt %r2, 6, done
		ja head
	done:
		exit`,
	loops: 2, // head's, and back's, which the jump at head's jeq closes
}, {
	// The step comes from the context, so the loop's checks are not
	// hoisted: a checked run faults in the loop's eighth iteration.
	name: "reads that fault in the middle",
	src: `	mov %r0, 0
		ldxdw %r5, [%r1+0]
		mov %r2, 0
	head:
		mov %r3, %r1
		add %r3, %r2
		ldxdw %r4, [%r3+0]
		add %r0, %r4
		add %r2, %r5
		add %r2, 3
		jlt %r2, 100, head
		exit`,
	fails: "outside the program's regions",
}, {
	name: "stores that fault in the middle",
	src: `	mov %r0, 0
		ldxdw %r5, [%r1+0]
		mov %r2, 0
	head:
		mov %r3, %r1
		add %r3, %r2
		stxb [%r3+1], %r2
		add %r0, %r2
		add %r2, %r5
		add %r2, 3
		jlt %r2, 80, head
		exit`,
	fails: "outside the program's regions",
}}

// log2_int's loop makes enough budget tests per iteration to get a copy
// with the normal threshold; a counted loop does not.
func TestBudgetLoopThreshold(t *testing.T) {
	if !jit.HasBudgetLoops {
		t.Skip("no budget loops on " + runtime.GOARCH)
	}
	for _, tc := range []struct {
		shape string
		want  int
	}{{"selects", 1}, {"counted, conditional back edge", 0}} {
		for _, shape := range budgetLoopShapes {
			if shape.name != tc.shape {
				continue
			}
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: asm.MustAssemble(shape.src)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := jit.BudgetLoops(vp, jit.Options{Unchecked: true}); n != tc.want {
				t.Errorf("%s: %d budget loops, want %d", tc.shape, n, tc.want)
			}
		}
	}
	setPrograms(t, func(name string, vp *vm.Program) {
		want := map[string]int{"log2_int": 1}[name]
		if n := jit.BudgetLoops(vp, jit.Options{Unchecked: true}); n != want {
			t.Errorf("%s: %d budget loops, want %d", name, n, want)
		}
	})
}

// TestBudgetLoops compares the engines on each loop shape with every
// budget from 1 until the run completes, so that the budget runs out at
// every instruction of every iteration, with the normal slices and with
// slices shorter and longer than an iteration: result, Executed, error
// (with a fault's address) and memory are the interpreter's.
func TestBudgetLoops(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	defer jit.SetBudgetLoopMinTests(1)() // small shapes show the mechanism
	mem := make([]byte, fuzzCtxSize)
	for i := range fuzzCtxSize / 8 {
		binary.LittleEndian.PutUint64(mem[8*i:], uint64(i+1))
	}
	binary.LittleEndian.PutUint64(mem, 5)
	for _, shape := range budgetLoopShapes {
		t.Run(shape.name, func(t *testing.T) {
			insns, err := asm.Assemble(shape.src)
			if err != nil {
				t.Fatalf("assemble: %v\n%s", err, shape.src)
			}
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := max(shape.loops, 1)
			if n := jit.BudgetLoops(vp, jit.Options{Unchecked: shape.hoisted}); jit.HasBudgetLoops && n != want {
				t.Fatalf("%d budget loops, want %d", n, want)
			}
			if loops, _ := jit.Hoisted(vp); loops != 0 != shape.hoisted {
				t.Fatalf("%d loops with hoisted checks, want some: %v", loops, shape.hoisted)
			}
			modes := []jit.Options{{}, {Blind: true}}
			if shape.fails == "" {
				modes = append(modes, jit.Options{Unchecked: true})
			}
			for _, slice := range []uint64{0, 2, 7, 40} {
				diffLoopBudgets(t, vp, diffInput{mem: mem}, modes, slice, shape.fails)
			}
		})
	}
}

// diffLoopBudgets compares each mode with the interpreter at budgets 0
// (the default) and 1, 2, ... until the interpreter's run completes, with
// budget slices of slice units (0: the normal ones). A run that does not
// end with the budget must fail with the error fails.
func diffLoopBudgets(t *testing.T, vp *vm.Program, in diffInput, modes []jit.Options, slice uint64, fails string) {
	t.Helper()
	env := vm.NewEnv()
	mem := guardedMem(len(in.mem))
	env.SetContext(mem)
	restore := jit.SetSlice(slice)
	defer restore()
	for _, o := range modes {
		p, err := jit.Compile(vp, &o)
		if err != nil {
			t.Fatal(err)
		}
		for budget := uint64(0); ; budget++ {
			in.budget = budget
			want := runOutcome(vp, env, mem, in, nil)
			got := runOutcome(p, env, mem, in, nil)
			if budget == 0 && (fails == "" && want.err != "" || !strings.Contains(want.err, fails)) {
				t.Fatalf("interpreter: %v, want error %q", want, fails)
			}
			if got.r0 != want.r0 || got.err != want.err || !sameExecuted(got, want, len(vp.Instructions())) || string(got.mem) != string(want.mem) {
				p.Close()
				t.Fatalf("%+v, slice %d, budget %d: jit %v, interpreter %v", o, slice, budget, got, want)
			}
			if budget > 0 && !strings.Contains(want.err, vm.ErrBudgetExceeded.Error()) {
				break
			}
		}
		p.Close()
	}
}

// The fuzzer's generator makes loops that the JIT runs with one
// budget test per iteration, at least when any loop may (as in the
// fuzzer's pass for them).
func TestGenBudgetLoops(t *testing.T) {
	if !jit.HasBudgetLoops {
		t.Skip("no budget loops on " + runtime.GOARCH)
	}
	defer jit.SetBudgetLoopMinTests(1)()
	rng := rand.New(rand.NewPCG(5, 6))
	loops := 0
	for range 300 {
		vp := generatedProgram(t, rng)
		loops += jit.BudgetLoops(vp, jit.Options{Unchecked: true})
	}
	t.Logf("%d budget loops in 300 programs", loops)
	if loops < 50 {
		t.Errorf("%d budget loops in 300 programs", loops)
	}
}

// With a budget that covers the whole run, every iteration that starts at
// a budget loop's head runs the loop's copy: its guard's other path fails
// with jit.TrapSlowPaths.
func TestBudgetLoopsTakeCopy(t *testing.T) {
	if !jit.HasBudgetLoops {
		t.Skip("no budget loops on " + runtime.GOARCH)
	}
	defer jit.SetBudgetLoopMinTests(1)()
	mem := make([]byte, fuzzCtxSize)
	for i := range fuzzCtxSize / 8 {
		binary.LittleEndian.PutUint64(mem[8*i:], uint64(i+1))
	}
	binary.LittleEndian.PutUint64(mem, 5)
	for _, shape := range budgetLoopShapes {
		t.Run(shape.name, func(t *testing.T) {
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: asm.MustAssemble(shape.src)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			modes := []jit.Options{{}, {Blind: true}}
			if shape.hoisted {
				modes = nil // no budget loop in checked code
			}
			if shape.fails == "" {
				modes = append(modes, jit.Options{Unchecked: true})
			}
			env := vm.NewEnv()
			ctx := guardedMem(len(mem))
			env.SetContext(ctx)
			for _, o := range modes {
				in := diffInput{mem: mem}
				want := runOutcome(vp, env, ctx, in, nil)
				p := compile(t, vp, jit.TrapSlowPaths(o))
				got := runOutcome(p, env, ctx, in, nil)
				if got.r0 != want.r0 || got.err != want.err || !sameExecuted(got, want, len(vp.Instructions())) {
					t.Errorf("%+v: jit %v, interpreter %v", o, got, want)
				}
				if !want.exact {
					continue
				}
				// Where the budget cannot pay an iteration, the guard
				// takes the ordinary loop: the trap, which the
				// interpreter does not have, fires.
				fired := false
				for in.budget = 1; in.budget < want.executed && !fired; in.budget++ {
					want := runOutcome(vp, env, ctx, in, nil)
					got := runOutcome(p, env, ctx, in, nil)
					fired = got.err != want.err || got.executed != want.executed
				}
				if !fired {
					t.Errorf("%+v: the trap never fired", o)
				}
			}
		})
	}
}
