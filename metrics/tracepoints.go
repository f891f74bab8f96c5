package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/uebpf/uebpf/tracepoint"
)

// tracepointCollector reports tracepoint.Stats of every declared
// tracepoint.
type tracepointCollector struct {
	fired, matched, recorded, dropped, errors *prometheus.Desc
}

// Tracepoints returns a collector of the counters of every tracepoint the
// process declared, labelled by its name ("provider:name"):
// uebpf_tracepoint_fired_total, _matched_total, _recorded_total,
// _dropped_total and _errors_total (see tracepoint.Stats).
func Tracepoints() prometheus.Collector {
	desc := func(what, help string) *prometheus.Desc {
		return prometheus.NewDesc("uebpf_tracepoint_"+what+"_total", help, []string{"tracepoint"}, nil)
	}
	return &tracepointCollector{
		fired:    desc("fired", "Firings of the tracepoint while something was attached."),
		matched:  desc("matched", "Program runs on the tracepoint that kept the event."),
		recorded: desc("recorded", "Kept events written to a session's ring buffer."),
		dropped:  desc("dropped", "Kept events a session's ring buffer had no room for."),
		errors:   desc("errors", "Program runs on the tracepoint that failed."),
	}
}

func (c *tracepointCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.fired, c.matched, c.recorded, c.dropped, c.errors} {
		ch <- d
	}
}

func (c *tracepointCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range tracepoint.List() {
		name := p.Name()
		st := p.Stats()
		for _, m := range []struct {
			d *prometheus.Desc
			v uint64
		}{{c.fired, st.Fired}, {c.matched, st.Matched}, {c.recorded, st.Recorded}, {c.dropped, st.Dropped}, {c.errors, st.Errors}} {
			ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v), name)
		}
	}
}
