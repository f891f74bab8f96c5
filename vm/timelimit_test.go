package vm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// The interpreter gets its budget one slice at a time; a run that spends
// many slices executes exactly as many instructions as one that got its
// budget whole, and stops at the same instruction, whichever kind of
// instruction ends a slice (a taken jump, a local call, a return, a
// helper call).
func TestSlicedBudgetExact(t *testing.T) {
	hs := vm.Helpers{1: {Name: "zero", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }}}
	for _, tc := range []struct {
		name, src string
		n         uint64 // r2: iterations
		perIter   uint64 // slots an iteration executes
		fixed     uint64 // slots outside the loop
		r0        uint64
	}{
		{"jump", "mov %r0, 0\nadd %r0, 1\njlt %r0, %r2, -2\nexit", 100_000, 2, 2, 100_000},
		{"local call", "mov %r6, 0\ncall local f\nadd %r6, 1\njlt %r6, %r2, -3\nmov %r0, %r6\nexit\nf:\nmov %r0, 1\nexit", 50_000, 5, 3, 50_000},
		{"helper", "mov %r6, 0\ncall 1\nadd %r6, 1\njlt %r6, %r2, -3\nmov %r0, %r6\nexit", 50_000, 3, 3, 50_000},
	} {
		total := tc.fixed + tc.n*tc.perIter
		for _, budget := range []uint64{total, total - 1, 1<<16 - 1, 1 << 16, 1<<16 + 1, 3<<16 + 2} {
			insns, err := asm.Assemble(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: hs})
			if err != nil {
				t.Fatal(err)
			}
			e := vm.NewEnv()
			e.SetArg(1, tc.n)
			e.SetBudget(budget)
			r0, err := p.Exec(e)
			if budget >= total {
				if err != nil || r0 != tc.r0 || e.Executed() != total {
					t.Errorf("%s, budget %d: r0 %d, %v, executed %d; want %d, nil, %d", tc.name, budget, r0, err, e.Executed(), tc.r0, total)
				}
				continue
			}
			if !errors.Is(err, vm.ErrBudgetExceeded) || e.Executed() != budget {
				t.Errorf("%s, budget %d: %v, executed %d; want ErrBudgetExceeded after %d", tc.name, budget, err, e.Executed(), budget)
			}
		}
	}
}

// Helpers charge their work with Env.Charge: it counts in Executed, and a
// charge the budget cannot pay ends the run with ErrBudgetExceeded at the
// call.
func TestHelperCharge(t *testing.T) {
	hs := vm.Helpers{1: {Name: "costly", Func: func(e *vm.Env, n, _, _, _, _ uint64) uint64 {
		e.Charge(n)
		return 7
	}}}
	p := mustLoad(t, "mov %r1, 100\ncall 1\nexit", hs)
	for _, tc := range []struct {
		budget   uint64
		wantErr  bool
		executed uint64
	}{{1000, false, 103}, {103, false, 103}, {101, true, 101}} {
		e := vm.NewEnv()
		e.SetBudget(tc.budget)
		r0, err := p.Exec(e)
		var re *vm.RunError
		switch {
		case tc.wantErr && (!errors.As(err, &re) || re.PC != 1 || !errors.Is(err, vm.ErrBudgetExceeded)):
			t.Errorf("budget %d: %v, want ErrBudgetExceeded at pc 1", tc.budget, err)
		case !tc.wantErr && (err != nil || r0 != 7):
			t.Errorf("budget %d: %d, %v", tc.budget, r0, err)
		case e.Executed() != tc.executed:
			t.Errorf("budget %d: executed %d, want %d", tc.budget, e.Executed(), tc.executed)
		}
	}
}

// A run ends at its time limit, or when its context is cancelled, with a
// *RunError whose cause says which.
func TestInterpreterTimeLimits(t *testing.T) {
	insns, err := asm.Assemble("ja -1\nexit")
	if err != nil {
		t.Fatal(err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Budget: 1 << 62, Timeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var re *vm.RunError
	if _, err := p.Run(nil); !errors.As(err, &re) || !errors.Is(err, vm.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run: %v, want ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.RunContext(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("RunContext, cancelled before: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := p.RunContext(ctx, nil); !errors.As(err, &re) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, vm.ErrTimeout) {
		t.Errorf("RunContext with a deadline: %v, want the context's error", err)
	}
	// Loops that leave the interpreter's loop at every iteration, for a
	// helper call, still end at the time limit: the slice is the run's,
	// not one interpret call's.
	hs := vm.Helpers{1: {Name: "zero", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }}}
	for _, src := range []string{"call 1\nja -2\nexit", "call local f\nja -2\nexit\nf:\ncall 1\nexit"} {
		insns, err := asm.Assemble(src)
		if err != nil {
			t.Fatal(err)
		}
		q, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: hs, Budget: 1 << 62, Timeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Run(nil); !errors.Is(err, vm.ErrTimeout) {
			t.Errorf("%q: %v, want ErrTimeout", src, err)
		}
	}
	// An Env's own limit overrides the program's; a negative one is none.
	e := vm.NewEnv()
	e.SetTimeout(time.Millisecond)
	if _, err := p.Exec(e); !errors.Is(err, vm.ErrTimeout) {
		t.Errorf("Env timeout: %v", err)
	}
	e.SetTimeout(-1)
	e.SetBudget(1 << 24)
	if _, err := p.Exec(e); !errors.Is(err, vm.ErrBudgetExceeded) {
		t.Errorf("no timeout: %v, want the budget's end", err)
	}
}
