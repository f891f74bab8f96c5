package helpers_test

import (
	"errors"
	"testing"

	"github.com/uebpf/uebpf/vm"
)

// loopMain calls bpf_loop(ctx[0], callback, &ctx[8], ctx[16]) and returns
// its r0; the callback adds i to ctx[8] and stops after i == ctx[24].
const loopMain = `
	mov %r6, %r1
	ldxdw %r1, [%r6]
	lddw %r2, code_addr(0)
	mov %r3, %r6
	add %r3, 8
	ldxdw %r4, [%r6+16]
	call 181
	exit`

const loopCallback = `
	ldxdw %r3, [%r2]
	add %r3, %r1
	stxdw [%r2], %r3
	ldxdw %r4, [%r2+16]
	mov %r0, 0
	jne %r1, %r4, +1
	mov %r0, 1
	exit`

func TestLoop(t *testing.T) {
	p := loadInsns(t, withCallback(t, loopMain, loopCallback), nil)
	ctx := make([]byte, 32)
	for _, tc := range []struct {
		name           string
		n, flags, stop uint64
		want, wantSum  uint64
	}{
		{"ten", 10, 0, 1 << 40, 10, 45},
		{"zero", 0, 0, 1 << 40, 0, 0},
		{"early stop", 10, 0, 5, 6, 15},
		{"stop at first", 10, 0, 0, 1, 0},
		{"flags", 10, 1, 1 << 40, neg(22), 0},
		{"too many", 1<<23 + 1, 0, 1 << 40, neg(7), 0},
		{"u32 count", 1<<32 + 3, 0, 1 << 40, 3, 3},
	} {
		copy(ctx, kv(tc.n, 0))
		copy(ctx[16:], kv(tc.flags, tc.stop))
		got := run(t, p, ctx)
		if got != tc.want {
			t.Errorf("%s: r0 = %#x, want %#x", tc.name, got, tc.want)
		}
		if sum := le64(ctx[8:]); sum != tc.wantSum {
			t.Errorf("%s: sum %d, want %d", tc.name, sum, tc.wantSum)
		}
	}
}

func TestLoopMaxIterations(t *testing.T) {
	if testing.Short() {
		t.Skip("8M callbacks")
	}
	p := loadInsns(t, withCallback(t, loopMain, "mov %r0, 0\nexit"), nil)
	e := vm.NewEnv()
	e.SetContext(loopCtx(1 << 23))
	e.SetTimeout(-1) // the race detector makes 8M callbacks slower than the default limit
	if got, err := p.Exec(e); err != nil || got != 1<<23 {
		t.Errorf("r0 = %d, %v; want %d", got, err, 1<<23)
	}
}

func TestLoopErrors(t *testing.T) {
	// A callback that faults ends the run with its error.
	p := loadInsns(t, withCallback(t, loopMain, "ldxdw %r0, [%r1]\nexit"), nil)
	if _, err := p.Run(loopCtx(3)); !errors.Is(err, vm.ErrMemoryAccess) {
		t.Errorf("faulting callback: %v", err)
	}
	// The budget covers the callbacks.
	p = loadInsns(t, withCallback(t, loopMain, "mov %r0, 0\nexit"), nil)
	env := vm.NewEnv()
	env.SetContext(loopCtx(1000))
	env.SetBudget(500)
	if _, err := p.Exec(env); !errors.Is(err, vm.ErrBudgetExceeded) {
		t.Errorf("budget: %v", err)
	}
	// Not a function: -EINVAL.
	p = load(t, "mov %r1, 3\nmov %r2, 0\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit", nil)
	if got := run(t, p, nil); got != neg(22) {
		t.Errorf("no callback: %#x", got)
	}
	// A callback stopping the run (a helper calling Env.Stop) ends the loop
	// and the run.
	set := stopSet()
	p = loadInsns(t, withCallback(t, loopMain, "mov %r1, 9\ncall 0x10000\nmov %r0, 0\nexit"), set)
	if got := run(t, p, loopCtx(5)); got != 9 {
		t.Errorf("stopped run: r0 = %d, want 9", got)
	}
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// loopCtx is the context of loopMain for n iterations, no flags, no stop.
func loopCtx(n uint64) []byte {
	return append(kv(n, 0), kv(0, 1<<40)...)
}
