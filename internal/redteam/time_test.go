package redteam

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/racebuild"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// timeLimit is the limit of the slow programs; a run must end within
// timeSlack of it: 2x the limit plus scheduling slack on a busy machine,
// where a load of 9 on two CPUs delayed runs by more than 100 ms. Without
// the limits the runs would not end at all.
const (
	timeLimit = 100 * time.Millisecond
	timeSlack = 2*timeLimit + time.Second
)

// slowCase is a program that runs for ever (or for minutes) unless a time
// limit stops it.
type slowCase struct {
	name string
	src  string
}

// slowCtx holds, at 0, a format of eight %s; at 64, eight pointers to the
// 500-byte string at 256.
func slowCtx() []byte {
	ctx := make([]byte, 1024)
	copy(ctx, "%s%s%s%s%s%s%s%s\x00")
	for i := 256; i < 756; i++ {
		ctx[i] = 'x'
	}
	for i := range 8 {
		binary.LittleEndian.PutUint64(ctx[64+8*i:], uint64(uintptr(unsafe.Pointer(&ctx[256]))))
	}
	return ctx
}

var slowCases = []slowCase{
	{name: "ja-minus-one", src: "ja -1\nexit"},
	{name: "ktime-loop", src: `
	l:	call 5
		ja l
		exit`},
	{name: "snprintf-loop", src: `
		mov %r6, %r1
	l:	mov %r1, %r10
		add %r1, -512
		mov %r2, 512
		mov %r3, %r6
		mov %r4, %r6
		add %r4, 64
		mov %r5, 64
		call 165
		ja l
		exit`},
	{name: "nested-loop", src: `
		mov %r1, 0x800000
		lddw %r2, code_addr(@outer)
		mov %r3, 0
		mov %r4, 0
		call 181
		exit
	outer:	mov %r1, 0x800000
		lddw %r2, code_addr(@inner)
		mov %r3, 0
		mov %r4, 0
		call 181
		mov %r0, 0
		exit
	inner:	call 5
		mov %r0, 0
		exit`},
	{name: "local-call-loop", src: `
	l:	call local f
		ja l
		exit
	f:	call 7
		exit`},
}

func TestHostileTime(t *testing.T) {
	for _, c := range slowCases {
		for _, engine := range engines {
			for _, mode := range []string{"timeout", "cancel"} {
				t.Run(c.name+"/"+engine+"/"+mode, func(t *testing.T) {
					if engine == "jit" && !jit.Supported {
						t.Skip("jit: no native backend on this platform")
					}
					isolated(t, func(t *testing.T) (string, error) { return runSlow(c, engine, mode) })
				})
			}
		}
	}
}

func runSlow(c slowCase, engine, mode string) (string, error) {
	w, err := newWorld()
	if err != nil {
		return "", err
	}
	defer w.close()
	insns, err := assemble(c.src)
	if err != nil {
		return "", err
	}
	timeout := timeLimit
	if mode == "cancel" {
		timeout = -1
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: c.name, Instructions: insns, Maps: w.ms},
		&vm.Options{Helpers: helpers.Standard(nil), Budget: 1 << 62, Timeout: timeout})
	if err != nil {
		return "", err
	}
	run := p.RunContext
	if engine == "jit" {
		jp, err := jit.Compile(p, nil)
		if errors.Is(err, vm.ErrUnsupported) {
			return "not applicable: " + err.Error(), nil
		}
		if err != nil {
			return "", err
		}
		defer jp.Close()
		run = jp.RunContext
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if mode == "cancel" {
		time.AfterFunc(timeLimit, cancel)
	}
	start := time.Now()
	_, err = run(ctx, slowCtx())
	took := time.Since(start)
	var re *vm.RunError
	if !errors.As(err, &re) {
		return "", fmt.Errorf("after %v: got %v, want a *vm.RunError", took, err)
	}
	switch mode {
	case "timeout":
		if !errors.Is(err, vm.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("after %v: got %v, want vm.ErrTimeout and context.DeadlineExceeded", took, err)
		}
	case "cancel":
		if !errors.Is(err, context.Canceled) {
			return "", fmt.Errorf("after %v: got %v, want context.Canceled", took, err)
		}
	}
	if took > timeSlack && !racebuild.Enabled {
		return "", fmt.Errorf("run ended after %v (limit %v): %v", took, timeLimit, err)
	}
	return fmt.Sprintf("%v after %v", err, took), nil
}

// TestHostileGCPause runs a JIT loop of 500 ms, checked and unchecked,
// while another goroutine collects garbage: every collection must return
// within 10 ms (stop-the-world waits for generated code to return to Go),
// or on a loaded machine, where the OS delays every thread, within twice
// what the same collections take during an interpreter run (Go code,
// which Go preempts anywhere).
func TestHostileGCPause(t *testing.T) {
	if !jit.Supported {
		t.Skip("jit: no native backend on this platform")
	}
	for _, mode := range []string{"checked", "unchecked"} {
		t.Run(mode, func(t *testing.T) {
			isolated(t, func(t *testing.T) (string, error) { return gcPause(mode) })
		})
	}
}

const maxGCPause = 10 * time.Millisecond

func gcPause(mode string) (string, error) {
	// A loop that wraps a 64-bit counter: memory-safe, never ends.
	insns, err := assemble(`
		mov %r1, 0
	l:	add %r1, 1
		stxdw [%r10-8], %r1
		jne %r1, 0, l
		mov %r0, 0
		exit`)
	if err != nil {
		return "", err
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: "spin", Instructions: insns},
		&vm.Options{Helpers: helpers.Standard(nil), Budget: 1 << 62, Timeout: 500 * time.Millisecond})
	if err != nil {
		return "", err
	}
	opts := &jit.Options{}
	if mode == "unchecked" {
		if _, err := verifier.Verify(p, &verifier.Options{LoopsBoundedByBudget: true}); err != nil {
			return "", fmt.Errorf("verify: %w", err)
		}
		opts.Unchecked = true
	}
	jp, err := jit.Compile(p, opts)
	if err != nil {
		return "", err
	}
	defer jp.Close()
	// A loaded machine delays any thread now and then: a run fails only
	// if three in a row are slow. Generated code that held up the
	// collector would make every one of them slow, by far.
	var detail string
	for range 3 {
		base, _, _, err := collectDuring(p.Run)
		if err != nil {
			return "", fmt.Errorf("interpreter: %w", err)
		}
		worst, n, took, err := collectDuring(jp.Run)
		if err != nil {
			return "", err
		}
		detail = fmt.Sprintf("run %v, %d GCs, slowest %v (interpreter: %v)", took, n, worst, base)
		if worst <= maxGCPause || worst <= 2*base || racebuild.Enabled && worst <= 10*maxGCPause {
			return detail, nil
		}
	}
	return "", fmt.Errorf("%s: a GC took more than %v", detail, maxGCPause)
}

// collectDuring runs run (a 500 ms run that ends at its time limit) while
// another goroutine collects garbage, and returns the slowest collection,
// how many there were and how long the run took.
func collectDuring(run func([]byte) (uint64, error)) (worst time.Duration, n int, took time.Duration, err error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			start := time.Now()
			runtime.GC()
			worst = max(worst, time.Since(start))
			n++
			time.Sleep(time.Millisecond)
		}
	}()
	start := time.Now()
	_, err = run(nil)
	took = time.Since(start)
	close(done)
	wg.Wait()
	if !errors.Is(err, vm.ErrTimeout) {
		return 0, 0, took, fmt.Errorf("run: got %v after %v, want vm.ErrTimeout", err, took)
	}
	return worst, n, took, nil
}
