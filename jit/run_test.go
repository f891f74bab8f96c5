package jit_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// Run reuses Envs between runs of a program that calls no helper without
// resetting them: each run must still see only its own context.
func TestRunReplacesContext(t *testing.T) {
	vp := loadVM(t, "ldxb %r0, [%r1+15]\nadd %r0, %r2\nexit", nil)
	p := compile(t, vp, jit.Options{})
	big, small := make([]byte, 16), make([]byte, 8)
	big[15] = 7
	for i, tc := range []struct {
		ctx   []byte
		want  uint64
		fault bool
	}{
		{big, 7 + 16, false},
		{small, 0, true}, // the 16-byte context of the last run is gone
		{nil, 0, true},
		{big, 7 + 16, false},
		{big[:0], 0, true},
	} {
		r0, err := p.Run(tc.ctx)
		if tc.fault {
			if !errors.Is(err, vm.ErrMemoryAccess) {
				t.Errorf("run %d: r0 %d, err %v; want a memory access error", i, r0, err)
			}
			continue
		}
		if err != nil || r0 != tc.want {
			t.Errorf("run %d: r0 %d, err %v; want %d", i, r0, err, tc.want)
		}
	}
}

// Runs from many goroutines each get their own Env.
func TestRunConcurrent(t *testing.T) {
	vp := loadVM(t, `
		ldxdw %r0, [%r1]
		mov %r3, 1000
	loop:
		stxdw [%r10-8], %r0
		ldxdw %r0, [%r10-8]
		add %r0, 1
		sub %r3, 1
		jne %r3, 0, loop
		stxdw [%r1], %r0
		exit`, nil)
	p := compile(t, vp, jit.Options{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			ctx := make([]byte, 8)
			for i := range 100 {
				want := uint64(1000 * (i + 1))
				if r0, err := p.Run(ctx); err != nil || r0 != want {
					t.Errorf("goroutine %d, run %d: %d, %v; want %d", g, i, r0, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
