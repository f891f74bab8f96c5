package clock

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Now follows CLOCK_MONOTONIC closely and never goes back, from many
// goroutines, across several re-anchorings.
func TestNowFollowsMonotonic(t *testing.T) {
	if !tscUsable() {
		t.Log("the kernel's clocksource is not the TSC: Now is runtime.nanotime here")
	}
	const runFor = 250 * time.Millisecond // five anchor spans
	var wg sync.WaitGroup
	var worstAll atomic.Int64 // not exact under contention: for the log
	// More goroutines than CPUs: some are preempted between reading the
	// anchor and the counter, across anchor switches.
	n := 4 * runtime.GOMAXPROCS(0)
	errs := make(chan string, n)
	for range n {
		wg.Go(func() {
			last := Now()
			var worst int64
			for end := nanotime() + int64(runFor); ; {
				before := nanotime()
				now := Now()
				after := nanotime()
				if now < last {
					errs <- "Now went back"
					return
				}
				last = now
				if after > end {
					break
				}
				// Only where nothing preempted the goroutine between the
				// reference readings does their window say anything.
				if after-before < int64(5*time.Microsecond) {
					worst = max(worst, before-now, now-after)
				}
			}
			if worst > int64(20*time.Microsecond) {
				errs <- "Now strayed from nanotime by " + time.Duration(worst).String()
			}
			worstAll.Store(max(worstAll.Load(), worst))
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("largest distance from nanotime: %v", time.Duration(worstAll.Load()))
}

func TestNowWithoutCounter(t *testing.T) {
	saved := current.Load()
	defer func() { current.Store(saved); disabled.Store(false) }()
	current.Store(nil)
	disabled.Store(true)
	before := nanotime()
	now := Now()
	if now < before || now > nanotime() {
		t.Errorf("Now without the counter = %d, want nanotime (%d)", now, before)
	}
}

func BenchmarkNow(b *testing.B) {
	Now()
	time.Sleep(2 * time.Millisecond) // calibrated
	Now()
	b.Run("clock", func(b *testing.B) {
		for b.Loop() {
			Now()
		}
	})
	b.Run("nanotime", func(b *testing.B) {
		for b.Loop() {
			nanotime()
		}
	})
}
