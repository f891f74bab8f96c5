// Package metrics exports what uebpf counts to Prometheus: the counters of
// every declared tracepoint, and the contents of maps that programs fill
// (in userspace or in the kernel), the way cloudflare's ebpf_exporter
// turns maps into metrics.
//
// A map becomes a counter, a gauge or a histogram. Its key is split into
// labels, each decoded from its bytes (an unsigned integer, a string, a
// table of names); its value is an unsigned 64-bit count, summed over the
// CPUs of a per-CPU map. For a histogram the key's last part is the
// bucket: bucket i of an Exp2 histogram counts values up to 2^i
// (times Multiplier), of a Linear one values up to i.
//
// Everything is read when Prometheus scrapes: nothing runs in between,
// and programs pay nothing for being exported.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(metrics.Tracepoints())
//	c, err := metrics.NewMapCollector(metrics.Map{...})
//	reg.MustRegister(c)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
//		ErrorHandling: promhttp.ContinueOnError,
//	}))
//
// Map keys are written by programs, often from data any process controls
// (a comm set with prctl), so no key fails a scrape. Prometheus refuses
// label values that are not valid UTF-8: String escapes them, reversibly
// (a backslash as \\, a byte outside valid UTF-8 as \xNN; UnescapeString
// undoes it), and the value of any other Decoder that is not UTF-8 is
// escaped the same way. A map that cannot be read, or a key a Decoder
// refuses, makes that map's metric invalid, with the reason: Handler, or
// promhttp with ContinueOnError as above, serves the other metrics.
package metrics
