//go:build linux

package tracker_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// The collector reports what the kernel measured: counts, exact sums and
// the log2 buckets, per syscall.
func TestCollector(t *testing.T) {
	tr := newTracker(t, tracker.Config{Static: time.Millisecond})
	tid := lockTracked(t, tr)
	const naps, nap = 3, 2 * time.Millisecond
	for range 5 {
		unix.Getppid()
	}
	for range naps {
		unix.Nanosleep(&unix.Timespec{Nsec: int64(nap)}, nil)
	}
	tr.Untrack(tid)
	runtime.UnlockOSThread()

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tr.Collector())
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]map[string]*dto.Metric{}
	for _, f := range fams {
		by[f.GetName()] = map[string]*dto.Metric{}
		for _, m := range f.GetMetric() {
			by[f.GetName()][m.GetLabel()[0].GetValue()] = m
		}
	}
	if h := by["latency_tracker_syscall_duration_seconds"]["getppid"].GetHistogram(); h.GetSampleCount() < 5 {
		t.Errorf("getppid: %d calls, want at least 5", h.GetSampleCount())
	}
	h := by["latency_tracker_syscall_duration_seconds"]["nanosleep"].GetHistogram()
	if h.GetSampleCount() != naps || h.GetSampleSum() < naps*nap.Seconds() {
		t.Fatalf("nanosleep: %d calls, %gs, want %d of at least %v", h.GetSampleCount(), h.GetSampleSum(), naps, nap)
	}
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() < nap.Seconds() && b.GetCumulativeCount() != 0 {
			t.Errorf("nanosleep: %d calls up to %gs, shorter than %v", b.GetCumulativeCount(), b.GetUpperBound(), nap)
		}
	}
	if n := by["latency_tracker_slow_calls_total"]["nanosleep"].GetCounter().GetValue(); n != naps {
		t.Errorf("nanosleep: %v slow calls, want %d over the 1 ms threshold", n, naps)
	}
	if v := by["latency_tracker_threshold_seconds"]["nanosleep"].GetGauge().GetValue(); v != time.Millisecond.Seconds() {
		t.Errorf("nanosleep threshold %v, want 0.001", v)
	}
}
