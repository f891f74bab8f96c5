package jit_test

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/racebuild"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// Long runs get their budget in slices: a run that spends many slices
// ends, or fails, exactly where the interpreter does, with the same
// Executed, in every mode, whatever the budget's remainder.
func TestSlicedBudget(t *testing.T) {
	// n iterations of 3 slots, then exit: 3n+2 slots in all.
	loop := `
		mov %r0, 0
		add %r0, 1
		mov %r1, %r0
		jlt %r1, %r2, -3
		exit`
	local := `
		mov %r6, 0
		call local f
		add %r6, 1
		jlt %r6, %r2, -3
		mov %r0, %r6
		exit
	f:
		mov %r0, 1
		exit`
	for _, tc := range []struct {
		name, src string
		n         uint64
		budgets   []uint64
	}{
		{"loop", loop, 300_000, []uint64{0, 900_001, 900_002, 900_003, 1 << 18, 1<<16 + 1}},
		{"local calls", local, 100_000, []uint64{0, 600_003, 600_004, 1 << 17}},
	} {
		insns, err := asm.Assemble(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Budget: 1 << 24})
		if err != nil {
			t.Fatal(err)
		}
		run := func(p interface{ Exec(*vm.Env) (uint64, error) }, budget uint64) (uint64, uint64, error) {
			e := vm.NewEnv()
			e.SetArg(1, tc.n)
			e.SetBudget(budget)
			r0, err := p.Exec(e)
			return r0, e.Executed(), err
		}
		for _, opts := range []jit.Options{{}, {Unchecked: true}, {Unchecked: true, Blind: true}} {
			p := compile(t, vp, opts)
			for _, budget := range tc.budgets {
				want0, wantN, wantErr := run(vp, budget)
				r0, n, err := run(p, budget)
				if r0 != want0 || n != wantN || errorString(err) != errorString(wantErr) {
					t.Errorf("%s %+v budget %d: jit %d, %d executed, %v; interpreter %d, %d, %v",
						tc.name, opts, budget, r0, n, err, want0, wantN, wantErr)
				}
			}
		}
	}
}

func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Options.Timeout and RunContext end runs that loop forever, on both
// engines, in every mode.
func TestTimeLimits(t *testing.T) {
	const limit = 50 * time.Millisecond
	// How late a run may end: a loaded machine (CI runs packages side by
	// side; a load of 10 on two CPUs delayed one by 130 ms) may not
	// schedule the goroutine at once. Without the limits the runs would
	// not end at all (their budget is 2^62 instructions).
	slack := time.Second
	if racebuild.Enabled {
		slack = 3 * time.Second
	}
	for _, tc := range []struct {
		name, src string
	}{
		{"ja -1", "ja -1\nexit"},
		{"counting loop", "mov %r0, 0\nadd %r0, 1\nja -2\nexit"},
		{"local calls", "call local f\nja -2\nexit\nf:\nmov %r0, 1\nexit"},
	} {
		insns, err := asm.Assemble(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		type engine struct {
			name string
			run  func([]byte) (uint64, error)
			ctx  func(context.Context, []byte) (uint64, error)
		}
		// engines returns the program on each engine with timeout as its
		// Options.Timeout.
		engines := func(timeout time.Duration) []engine {
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Budget: 1 << 62, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			e := []engine{{"interpreter", vp.Run, vp.RunContext}}
			if jit.Supported {
				for _, opts := range []jit.Options{{}, {Unchecked: true}} {
					p := compile(t, vp, opts)
					name := "jit checked"
					if opts.Unchecked {
						name = "jit unchecked"
					}
					e = append(e, engine{name, p.Run, p.RunContext})
				}
			}
			return e
		}
		// The cancellation runs have a time limit too, long enough that
		// a late cancel on a loaded machine still comes first, so that a
		// run that ignored its context would fail rather than hang.
		limited, cancellable := engines(limit), engines(time.Minute)
		for i, eng := range limited {
			start := time.Now()
			_, err := eng.run(nil)
			took := time.Since(start)
			var re *vm.RunError
			if !errors.As(err, &re) || !errors.Is(err, vm.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s on %s: %v, want a *vm.RunError with ErrTimeout", tc.name, eng.name, err)
			}
			if took > limit+slack {
				t.Errorf("%s on %s: Timeout %v ended the run after %v", tc.name, eng.name, limit, took)
			}

			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(limit/2, cancel)
			start = time.Now()
			_, err = cancellable[i].ctx(ctx, nil)
			took = time.Since(start)
			if !errors.As(err, &re) || !errors.Is(err, context.Canceled) {
				t.Errorf("%s on %s: RunContext %v, want a *vm.RunError wrapping context.Canceled", tc.name, eng.name, err)
			}
			if took > limit/2+slack {
				t.Errorf("%s on %s: cancelled after %v, the run ended after %v", tc.name, eng.name, limit/2, took)
			}
		}
	}
}

// A long JIT run does not hold up the garbage collector: generated code
// comes back to Go between slices of its budget, where the goroutine
// stops for a stop-the-world.
func TestGCDuringLongRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a second or two")
	}
	vp := loadBudget(t, 1<<62, "mov %r0, 0\nadd %r0, 1\nja -2\nexit")
	for _, opts := range []jit.Options{{}, {Unchecked: true}} {
		p := compile(t, vp, opts)
		// The interpreter is Go code, which Go preempts anywhere: its
		// figure is what the machine's load alone costs. A loaded machine
		// delays any thread now and then, so the test fails only if three
		// runs in a row are slow; code that held up the collector would
		// make every one slow, by far.
		for attempt := 1; ; attempt++ {
			base, baseStop := slowestGC(t, vp.RunContext)
			worst, stop := slowestGC(t, p.RunContext)
			t.Logf("jit %+v: slowest runtime.GC during the run: %v, slowest stop of the world: < %v (interpreter: %v, < %v)",
				opts, worst, stop, base, baseStop)
			// A collector held up by the code would wait for the whole
			// run (gcRun); under the race detector only that is told apart.
			bound := 10 * time.Millisecond
			if racebuild.Enabled {
				bound = 100 * time.Millisecond
			}
			if worst <= bound || worst <= 2*base {
				break
			}
			if attempt == 3 {
				t.Errorf("jit %+v: runtime.GC took %v during a run (%v during an interpreter run)", opts, worst, base)
				break
			}
		}
	}
}

// A long run through the direct entry (a loop) does not hold up the
// collector either: the entry gives the code one slice, and the rest of
// the run is Go's, in slices, up to its time limit.
func TestGCDuringLongDirectRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a second or two")
	}
	insns, err := asm.Assemble("mov %r0, 0\nadd %r0, 1\nja -2\nexit")
	if err != nil {
		t.Fatal(err)
	}
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Budget: 1 << 62, Timeout: gcRun()})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []jit.Options{{}, {Unchecked: true}} {
		d := compile(t, vp, opts).Direct()
		if d == nil {
			if runtime.GOARCH == "amd64" {
				t.Fatal("no direct entry")
			}
			t.Skip("no direct entry on " + runtime.GOARCH)
		}
		run := func(_ context.Context, ctx []byte) (uint64, error) { return d(ctx) }
		for attempt := 1; ; attempt++ {
			base, _ := slowestGCErr(t, func(_ context.Context, ctx []byte) (uint64, error) { return vp.Run(ctx) }, vm.ErrTimeout)
			worst, stop := slowestGCErr(t, run, vm.ErrTimeout)
			t.Logf("direct %+v: slowest runtime.GC during the run: %v, slowest stop of the world: < %v (interpreter: %v)", opts, worst, stop, base)
			bound := 10 * time.Millisecond
			if racebuild.Enabled {
				bound = 100 * time.Millisecond
			}
			if worst <= bound || worst <= 2*base {
				break
			}
			if attempt == 3 {
				t.Errorf("direct %+v: runtime.GC took %v during a run (%v during an interpreter run)", opts, worst, base)
				break
			}
		}
	}
}

// gcRun is how long each run of TestGCDuringLongRun lasts: 200 ms, 20
// times its bound, or 500 ms under the race detector (5 times its
// bound) and with UEBPF_LONG=1.
func gcRun() time.Duration {
	if racebuild.Enabled || long() {
		return 500 * time.Millisecond
	}
	return 200 * time.Millisecond
}

// slowestGC returns the longest runtime.GC among those called back to
// back during a run of gcRun, and a bound on the longest time the runtime
// waited for goroutines to stop for a collection (the runtime's
// /sched/pauses/stopping/gc histogram).
func slowestGC(t *testing.T, run func(context.Context, []byte) (uint64, error)) (time.Duration, time.Duration) {
	return slowestGCErr(t, run, context.DeadlineExceeded)
}

// slowestGCErr is slowestGC of a run that ends with want.
func slowestGCErr(t *testing.T, run func(context.Context, []byte) (uint64, error), want error) (time.Duration, time.Duration) {
	stopping := []metrics.Sample{{Name: "/sched/pauses/stopping/gc:seconds"}}
	metrics.Read(stopping)
	before := slices.Clone(stopping[0].Value.Float64Histogram().Counts) // Read reuses the slices
	ctx, cancel := context.WithTimeout(context.Background(), gcRun())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := run(ctx, nil); !errors.Is(err, want) {
			t.Error(err)
		}
	})
	time.Sleep(20 * time.Millisecond) // the run is under way
	var worst time.Duration
	for ctx.Err() == nil {
		start := time.Now()
		runtime.GC()
		worst = max(worst, time.Since(start))
	}
	wg.Wait()
	metrics.Read(stopping)
	after := stopping[0].Value.Float64Histogram()
	var stop time.Duration
	for i, n := range after.Counts {
		if i < len(before) && n > before[i] {
			stop = time.Duration(after.Buckets[i+1] * float64(time.Second))
		}
	}
	return worst, stop
}
