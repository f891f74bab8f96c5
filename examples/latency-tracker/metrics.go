//go:build linux

package tracker

import (
	"github.com/prometheus/client_golang/prometheus"
)

// collector serves the tracker's counters to Prometheus.
type collector struct {
	t                     *Tracker
	latency, slow, thresh *prometheus.Desc
}

// Collector returns a Prometheus collector of the tracker's counters, read
// at each scrape: per syscall, a latency histogram (the kernel's log2
// buckets; count and sum exact), the calls slower than their threshold,
// and the threshold in force. With Config.Decay the histograms are halved
// every interval, so their counts are not monotonic.
func (t *Tracker) Collector() prometheus.Collector {
	label := []string{"syscall"}
	return &collector{
		t:       t,
		latency: prometheus.NewDesc("latency_tracker_syscall_duration_seconds", "Latency of the tracked threads' system calls.", label, nil),
		slow:    prometheus.NewDesc("latency_tracker_slow_calls_total", "Calls slower than their syscall's threshold.", label, nil),
		thresh:  prometheus.NewDesc("latency_tracker_threshold_seconds", "The threshold in force for the syscall.", label, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.latency
	ch <- c.slow
	ch <- c.thresh
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for nr := range uint32(NumSyscalls) {
		s := c.t.Stats(nr)
		if s.Count == 0 {
			continue
		}
		name := SyscallName(nr)
		// Bucket b holds calls of 2^b to 2^(b+1)-1 ns (b 0: 0 and 1).
		buckets := make(map[float64]uint64, NumBuckets)
		var cum uint64
		for b, n := range s.Buckets {
			cum += n
			buckets[float64(uint64(2)<<b-1)/1e9] = cum
		}
		ch <- prometheus.MustNewConstHistogram(c.latency, s.Count, s.Sum.Seconds(), buckets, name)
		ch <- prometheus.MustNewConstMetric(c.slow, prometheus.CounterValue, float64(s.Slow), name)
		ch <- prometheus.MustNewConstMetric(c.thresh, prometheus.GaugeValue, c.t.Threshold(nr).Seconds(), name)
	}
}
