//go:build linux

package tracker_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// fill makes a tracked thread call getppid and short nanosleeps, then
// stops tracking it, so the histograms no longer change.
func fill(t *testing.T, tr *tracker.Tracker) {
	t.Helper()
	tid := lockTracked(t, tr)
	for i := 0; i < 300; i++ {
		unix.Getppid()
		if i%3 == 0 {
			unix.Nanosleep(&unix.Timespec{Nsec: int64(50 * time.Microsecond)}, nil)
		}
	}
	tr.Untrack(tid)
	runtime.UnlockOSThread()
}

// The thresholds the policy program sets in the VM are the ones the
// policies define, computed here in Go (floating point) from the same
// histograms.
func TestPolicies(t *testing.T) {
	tests := []struct {
		name string
		cfg  tracker.Config
		want func(s *tracker.Stats) float64
		tol  float64 // relative
	}{
		{"p99x2", tracker.Config{Policy: tracker.PolicyPercentile, Percentile: 99, Factor: 2},
			func(s *tracker.Stats) float64 { return float64(s.Percentile(99)) * 2 }, 0},
		{"p50x1.5", tracker.Config{Policy: tracker.PolicyPercentile, Percentile: 50, Factor: 1.5},
			func(s *tracker.Stats) float64 { return math.Floor(float64(s.Percentile(50)) * 1.5) }, 0},
		{"stddev k=3", tracker.Config{Policy: tracker.PolicyStddev, K: 3}, meanStddev(3), 0.02},
		{"stddev k=0.5", tracker.Config{Policy: tracker.PolicyStddev, K: 0.5}, meanStddev(0.5), 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.MinSamples, cfg.Floor = 50, time.Nanosecond
			tr := newTracker(t, cfg)
			fill(t, tr)
			if _, err := tr.UpdateThresholds(); err != nil {
				t.Fatal(err)
			}
			for _, nr := range []uint32{sysGetppid, sysNanosleep} {
				s := tr.Stats(nr)
				if s.Count < 50 {
					t.Fatalf("%s: %d calls measured", tracker.SyscallName(nr), s.Count)
				}
				got, want := float64(tr.Threshold(nr)), max(tt.want(&s), 1)
				if math.Abs(got-want) > tt.tol*want+1 {
					t.Errorf("%s: threshold %v, want %v (stats %+v)", tracker.SyscallName(nr), time.Duration(got), time.Duration(want), s)
				}
			}
			// A syscall never called keeps the initial threshold.
			if got := tr.Threshold(sysRead); got != tr.Config().Initial {
				t.Errorf("read (never called): threshold %v, want the initial %v", got, tr.Config().Initial)
			}
		})
	}
}

// meanStddev is mean + k·stddev with the kernel's exact mean and the
// deviation taken over the buckets' middles.
func meanStddev(k float64) func(s *tracker.Stats) float64 {
	return func(s *tracker.Stats) float64 {
		mean := float64(s.Sum) / float64(s.Count)
		var n, sq float64
		for b, c := range s.Buckets {
			mid := 1.0
			if b > 0 {
				mid = float64(uint64(3) << (b - 1))
			}
			n += float64(c)
			sq += float64(c) * (mid - mean) * (mid - mean)
		}
		return mean + k*math.Sqrt(sq/n)
	}
}

// Decay halves the policy's histograms each time the policy runs (the
// kernel's counts stay whole).
func TestDecay(t *testing.T) {
	tr := newTracker(t, tracker.Config{Policy: tracker.PolicyPercentile, Decay: true})
	fill(t, tr)
	before := tr.Stats(sysGetppid)
	if _, err := tr.UpdateThresholds(); err != nil {
		t.Fatal(err)
	}
	after := tr.PolicyStats(sysGetppid)
	if after.Count != before.Count-before.Count/2 {
		t.Errorf("count %d after decay, want %d", after.Count, before.Count-before.Count/2)
	}
	if raw := tr.Stats(sysGetppid); raw.Count != before.Count {
		t.Errorf("kernel count %d after decay, want %d", raw.Count, before.Count)
	}
	for b := range before.Buckets {
		if want := before.Buckets[b] - before.Buckets[b]/2; after.Buckets[b] != want {
			t.Errorf("bucket %d: %d after decay, want %d", b, after.Buckets[b], want)
		}
	}
}
