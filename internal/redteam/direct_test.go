package redteam

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// TestHostileDirect calls programs through jit.Program.Direct, the entry
// with nothing between Go and the code, each case in a child process: a
// context shorter than the proof's, no context, a program closed under a
// held func, and code that overwrites the registers Go keeps g and the
// error in, while the collector runs. Checked code that accesses memory
// must never get the entry.
func TestHostileDirect(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	cases := []struct {
		name string
		body func() (string, error)
	}{
		{"short contexts", directShortContexts},
		{"closed under a held func", directClosed},
		{"checked reads fault as Run does, stores get no entry", directChecked},
		{"checked reads through guessed pointers, r1 unread", directGuessed},
		{"r6 r8 r9 clobbered during GC", directClobber},
		{"loops past their slice, registers poisoned, during GC", directLongLoops},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !inChild() {
				t.Parallel()
			}
			isolated(t, func(*testing.T) (string, error) { return c.body() })
		})
	}
}

// directProgram compiles src with a proof for a ctxSize-byte context
// (checked when ctxSize is 0) and returns its Direct func, nil where the
// platform has none.
func directProgram(src string, ctxSize int) (*jit.Program, func([]byte) (uint64, error), error) {
	insns, err := asm.Assemble(src)
	if err != nil {
		return nil, nil, err
	}
	vp, err := vm.Load(&vm.ProgramSpec{Name: "direct", Instructions: insns}, nil)
	if err != nil {
		return nil, nil, err
	}
	var opts jit.Options
	if ctxSize > 0 {
		if opts.Verified, err = verifier.Verify(vp, &verifier.Options{ContextSize: ctxSize}); err != nil {
			return nil, nil, err
		}
	}
	p, err := jit.Compile(vp, &opts)
	if err != nil {
		return nil, nil, err
	}
	return p, p.Direct(), nil
}

// The last 8 bytes of a 64-byte context: any shorter context, empty or
// nil included, must be refused before the load.
func directShortContexts() (string, error) {
	p, run, err := directProgram("ldxdw %r0, [%r1+56]\nexit", 64)
	if err != nil || run == nil {
		return "no direct entry here", err
	}
	defer p.Close()
	for _, ctx := range [][]byte{nil, {}, make([]byte, 1), make([]byte, 56), make([]byte, 63)} {
		if r0, err := run(ctx); !errors.Is(err, jit.ErrShortContext) || r0 != 0 {
			return "", fmt.Errorf("%d-byte context: %d, %v; want ErrShortContext", len(ctx), r0, err)
		}
	}
	ctx := make([]byte, 64)
	ctx[56] = 7
	if r0, err := run(ctx); r0 != 7 || err != nil {
		return "", fmt.Errorf("64-byte context: %d, %v", r0, err)
	}
	return "5 short contexts refused", nil
}

// A func kept after Close returns ErrClosed: its code is gone.
func directClosed() (string, error) {
	p, run, err := directProgram("mov %r0, 1\nexit", 0)
	if err != nil || run == nil {
		return "no direct entry here", err
	}
	p.Close()
	p = nil
	runtime.GC() // the code's slot may be reused by now
	if _, _, err := directProgram("mov %r0, 2\nexit", 0); err != nil {
		return "", err
	}
	for range 3 {
		if r0, err := run(nil); !errors.Is(err, jit.ErrClosed) || r0 != 0 {
			return "", fmt.Errorf("after Close: %d, %v; want ErrClosed", r0, err)
		}
	}
	return "ErrClosed", nil
}

// Checked code that reads memory and stores nothing has a direct entry
// whose failed checks continue in Go, which runs the program again: its
// faults must be Run's. Checked code that stores has none.
func directChecked() (string, error) {
	// Checked code that only reads gets an entry: a read that faults,
	// past the context, from a wrapped pointer or from nothing, must
	// give Run's error, address included.
	p, run, err := directProgram("ldxdw %r0, [%r1+4096]\nexit", 0)
	if err != nil {
		return "", err
	}
	defer p.Close()
	if run != nil {
		for _, ctx := range [][]byte{nil, {}, make([]byte, 8), make([]byte, 4100)} {
			_, derr := run(ctx)
			_, rerr := p.Run(ctx)
			if !errors.Is(derr, vm.ErrMemoryAccess) || fmt.Sprint(derr) != fmt.Sprint(rerr) {
				return "", fmt.Errorf("%d-byte context: Direct %v; Run %v", len(ctx), derr, rerr)
			}
		}
	}
	if _, err := p.Run(make([]byte, 8)); !errors.Is(err, vm.ErrMemoryAccess) {
		return "", fmt.Errorf("Run: %v, want ErrMemoryAccess", err)
	}
	// Checked code that stores gets none: a fault after a store could not
	// be run again from the start.
	hasEntry := run != nil
	q, run, err := directProgram("stdw [%r1+0], 1\nldxdw %r0, [%r1+4096]\nexit", 0)
	if err != nil {
		return "", err
	}
	defer q.Close()
	if run != nil {
		return "", errors.New("checked code that stores has a direct entry")
	}
	if !hasEntry {
		return "no entry here; Run faults cleanly", nil
	}
	return "faults through Direct are Run's; no entry for stores", nil
}

// Checked code that never reads r1 but reads through an address it
// guessed: the entry skips r1 for code that does not read it, yet the
// checks' context region starts at r1. A guess of the context's own
// address must read what Run reads, and a guess of any other Go memory
// must fault as Run does, even when the caller left that very address
// in r1's register (callPoisoned).
func directGuessed() (string, error) {
	ctx := make([]byte, 64)
	ctx[8] = 42
	other := make([]byte, 64)
	for _, c := range []struct {
		target []byte
		want   uint64 // r0 when the read is allowed; 0 when it faults
	}{{ctx, 42}, {other, 0}} {
		src := fmt.Sprintf("lddw %%r2, %#x\nldxdw %%r0, [%%r2+8]\nexit", uintptr(unsafe.Pointer(&c.target[0])))
		p, run, err := directProgram(src, 0)
		if err != nil {
			return "", err
		}
		if run == nil {
			p.Close()
			return "no direct entry here", nil
		}
		for range 100 {
			dr0, derr := callPoisoned(run, ctx, uintptr(unsafe.Pointer(&c.target[0])))
			rr0, rerr := p.Run(ctx)
			if dr0 != rr0 || fmt.Sprint(derr) != fmt.Sprint(rerr) {
				p.Close()
				return "", fmt.Errorf("guess %#x: Direct %d, %v; Run %d, %v", &c.target[0], dr0, derr, rr0, rerr)
			}
			if c.want != 0 && (dr0 != c.want || derr != nil) || c.want == 0 && !errors.Is(derr, vm.ErrMemoryAccess) {
				p.Close()
				return "", fmt.Errorf("guess %#x: Direct %d, %v", &c.target[0], dr0, derr)
			}
		}
		p.Close()
		runtime.KeepAlive(c.target)
	}
	runtime.KeepAlive(other)
	return "the context's own address reads, any other faults, as in Run", nil
}

// Loops whose direct entry falls into the body leave it when their
// slice runs out by finding the run state the entry put below the stack
// pointer, and start again in Go. Runs of 200,000 iterations (about 10
// slices), checked code with no memory access and verified code that
// reads its context, called with garbage in every free register from
// several goroutines while the collector runs, must return Run's result.
func directLongLoops() (string, error) {
	const iterations = 200_000
	cases := []struct {
		src     string
		ctxSize int
		want    uint64
	}{
		{fmt.Sprintf("mov %%r0, 0\nmov %%r2, %d\nadd %%r0, 3\nsub %%r2, 1\njne %%r2, 0, -3\nexit", iterations), 0, 3 * iterations},
		{fmt.Sprintf("ldxw %%r3, [%%r1+0]\nmov %%r0, 0\nmov %%r2, %d\nadd %%r0, %%r3\nsub %%r2, 1\njne %%r2, 0, -3\nexit", iterations), 8, 7 * iterations},
	}
	ctx := []byte{7, 0, 0, 0, 0, 0, 0, 0}
	entries := 0
	for _, c := range cases {
		p, run, err := directProgram(c.src, c.ctxSize)
		if err != nil {
			return "", err
		}
		if run == nil {
			p.Close()
			continue
		}
		entries++
		stop := make(chan struct{})
		var gc, callers sync.WaitGroup
		gc.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					runtime.GC()
				}
			}
		})
		errs := make(chan error, 4)
		for range 4 {
			callers.Go(func() {
				for range 20 {
					r0, err := callPoisoned(run, ctx, uintptr(unsafe.Pointer(&ctx[0])))
					if r0 != c.want || err != nil {
						errs <- fmt.Errorf("%s: Direct %d, %v; want %d", c.src, r0, err, c.want)
						return
					}
				}
			})
		}
		callers.Wait()
		close(stop)
		gc.Wait()
		close(errs)
		if err := <-errs; err != nil {
			p.Close()
			return "", err
		}
		if r0, err := p.Run(ctx); r0 != c.want || err != nil {
			p.Close()
			return "", fmt.Errorf("%s: Run %d, %v; want %d", c.src, r0, err, c.want)
		}
		p.Close()
	}
	if entries == 0 {
		return "no direct entry here", nil
	}
	return fmt.Sprintf("%d loops through %d slices each, as Run", entries, iterations*3/(1<<16)), nil
}

// r6, r8 and r9 live in rbx (the error's first word), r14 (g) and r15:
// a program that leaves garbage in all three, run from many goroutines
// while the collector runs, must return clean results.
func directClobber() (string, error) {
	p, run, err := directProgram(`
	lddw %r6, 0xdeadbeefdeadbeef
	lddw %r8, 0x4141414141414141
	mov %r9, %r8
	mov %r0, %r1
	exit`, 0)
	if err != nil || run == nil {
		return "no direct entry here", err
	}
	defer p.Close()
	stop := make(chan struct{})
	var gc sync.WaitGroup
	gc.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			ctx := make([]byte, 8)
			for range 20000 {
				if r0, err := run(ctx); err != nil || r0 == 0 {
					errs <- fmt.Errorf("%d, %v", r0, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	gc.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	return "80000 runs", nil
}
