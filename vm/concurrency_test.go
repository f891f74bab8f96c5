package vm_test

import (
	"encoding/binary"
	"sync"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/vm"
)

// TestConcurrentRuns runs one program from many goroutines, each with its
// own context, while all of them also add atomically to a shared counter
// registered as a region: no run sees another's stack or context, and no
// atomic add is lost.
func TestConcurrentRuns(t *testing.T) {
	p := mustLoad(t, `
		ldxdw %r3, [%r1]       # this goroutine's input
		stxdw [%r10-8], %r3
		mov %r4, 1
		lock add [%r2], %r4    # the shared counter
		mov %r0, 0
		mov %r5, 1000
	loop:
		ldxdw %r6, [%r10-8]
		add %r0, %r6
		sub %r5, 1
		jne %r5, 0, loop
		exit`, nil)
	var counter uint64
	const goroutines, runs = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			env := vm.NewEnv()
			ctx := make([]byte, 8)
			binary.LittleEndian.PutUint64(ctx, uint64(g+1))
			for range runs {
				env.Reset()
				env.SetContext(ctx)
				env.AddRegion(unsafe.Pointer(&counter), 8, true)
				env.SetArg(1, uint64(uintptr(unsafe.Pointer(&counter))))
				r0, err := p.Exec(env)
				if err != nil || r0 != uint64(g+1)*1000 {
					t.Errorf("goroutine %d: r0 = %d, %v", g, r0, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if counter != goroutines*runs {
		t.Fatalf("counter = %d, want %d", counter, goroutines*runs)
	}
}

// TestRunPoolConcurrent uses Program.Run, which shares pooled Envs.
func TestRunPoolConcurrent(t *testing.T) {
	p := mustLoad(t, "ldxdw %r0, [%r1]\nstxdw [%r10-8], %r0\nldxdw %r0, [%r10-8]\nexit", nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ctx := make([]byte, 8)
			for i := range 1000 {
				v := uint64(g<<32 | i)
				binary.LittleEndian.PutUint64(ctx, v)
				if r0, err := p.Run(ctx); err != nil || r0 != v {
					t.Errorf("r0 = %#x, %v; want %#x", r0, err, v)
					return
				}
			}
		})
	}
	wg.Wait()
}
