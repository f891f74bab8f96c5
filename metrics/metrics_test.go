package metrics_test

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/metrics"
	"github.com/uebpf/uebpf/tracepoint"
)

// scrape serves the collectors over HTTP and parses what Prometheus would
// read.
func scrape(t *testing.T, cs ...prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func newMap(t *testing.T, spec *maps.Spec) maps.Map {
	t.Helper()
	m, err := maps.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func labelsOf(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	return strings.Join(parts, ",")
}

func TestTracepointCounters(t *testing.T) {
	type event struct{ Status uint32 }
	tp, err := tracepoint.Declare[event]("metricstest", "request")
	if err != nil {
		t.Fatal(err)
	}
	a, err := tracepoint.Attach(tp, tracepoint.Filter("status >= 500"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, s := range []uint32{200, 500, 503, 404, 500} {
		tp.Fire(&event{Status: s})
	}
	fams := scrape(t, metrics.Tracepoints())
	for name, want := range map[string]float64{
		"uebpf_tracepoint_fired_total":   5,
		"uebpf_tracepoint_matched_total": 3,
		"uebpf_tracepoint_errors_total":  0,
	} {
		var got []string
		for _, m := range fams[name].GetMetric() {
			if labelsOf(m) == "tracepoint=metricstest:request" {
				if v := m.GetCounter().GetValue(); v != want {
					t.Errorf("%s = %v, want %v", name, v, want)
				}
			}
			got = append(got, labelsOf(m))
		}
		if len(got) == 0 {
			t.Errorf("%s missing", name)
		}
	}
}

func TestMapMetrics(t *testing.T) {
	// Counts by pid and comm, in a hash map.
	byProc := newMap(t, &maps.Spec{Name: "by_proc", Type: maps.Hash, KeySize: 20, ValueSize: 8, MaxEntries: 16})
	procKey := func(pid uint32, comm string) []byte {
		k := make([]byte, 20)
		binary.LittleEndian.PutUint32(k, pid)
		copy(k[4:], comm)
		return k
	}
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	for _, e := range []struct {
		pid   uint32
		comm  string
		count uint64
	}{{1, "init", 7}, {42, "nginx", 1000}} {
		if err := byProc.Update(procKey(e.pid, e.comm), u64(e.count), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	// A per-CPU array summed over CPUs, with names for its index.
	perCPU := newMap(t, &maps.Spec{Name: "errs", Type: maps.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 2})
	ncpu := maps.PossibleCPUs()
	vals := make([]byte, 8*ncpu)
	for c := range ncpu {
		binary.LittleEndian.PutUint64(vals[8*c:], uint64(c+1))
	}
	if err := perCPU.Update(uint32(1), vals, maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	// A log2 latency histogram by syscall: key {u32 nr, u32 bucket}.
	lat := newMap(t, &maps.Spec{Name: "lat", Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 64})
	histKey := func(nr, bucket uint32) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, nr), bucket)
	}
	for _, e := range [][3]uint64{{0, 3, 5}, {0, 5, 2}, {1, 0, 4}} { // nr, bucket, count
		if err := lat.Update(histKey(uint32(e[0]), uint32(e[1])), u64(e[2]), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	c, err := metrics.NewMapCollector(
		metrics.Map{Name: "app_events_total", Help: "Events by process.", Map: byProc, Kind: metrics.Counter,
			Labels: []metrics.Label{{Name: "pid", Size: 4}, {Name: "comm", Size: 16, Decode: metrics.String}}},
		metrics.Map{Name: "app_errors_total", Help: "Errors by kind.", Map: perCPU, Kind: metrics.Counter,
			Labels: []metrics.Label{{Name: "kind", Size: 4, Decode: metrics.Names(map[uint64]string{0: "timeout", 1: "refused"})}}},
		metrics.Map{Name: "app_latency_seconds", Help: "Latency by syscall.", Map: lat, Kind: metrics.Histogram,
			Labels:  []metrics.Label{{Name: "syscall", Size: 4, Decode: metrics.Names(map[uint64]string{0: "read", 1: "write"})}, {Name: "bucket", Size: 4}},
			Buckets: metrics.Exp2, Multiplier: 1e-9, MaxBucket: 10},
	)
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, c)

	got := map[string]float64{}
	for _, m := range fams["app_events_total"].GetMetric() {
		got[labelsOf(m)] = m.GetCounter().GetValue()
	}
	if got["comm=init,pid=1"] != 7 || got["comm=nginx,pid=42"] != 1000 || len(got) != 2 {
		t.Errorf("app_events_total = %v", got)
	}
	got = map[string]float64{}
	for _, m := range fams["app_errors_total"].GetMetric() {
		got[labelsOf(m)] = m.GetCounter().GetValue()
	}
	if want := float64(ncpu * (ncpu + 1) / 2); got["kind=refused"] != want || got["kind=timeout"] != 0 {
		t.Errorf("app_errors_total = %v, want refused %v", got, want)
	}

	hists := map[string]*dto.Histogram{}
	for _, m := range fams["app_latency_seconds"].GetMetric() {
		hists[labelsOf(m)] = m.GetHistogram()
	}
	read := hists["syscall=read"]
	if read == nil || read.GetSampleCount() != 7 || hists["syscall=write"].GetSampleCount() != 4 {
		t.Fatalf("histograms %v", hists)
	}
	// Cumulative: 0 up to 4 ns, 5 from 8 ns (bucket 3), 7 from 32 ns.
	for _, b := range read.GetBucket() {
		le := b.GetUpperBound()
		want := uint64(0)
		switch {
		case le >= 32e-9*(1-1e-9):
			want = 7
		case le >= 8e-9*(1-1e-9):
			want = 5
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("read bucket le=%g: %d, want %d", le, b.GetCumulativeCount(), want)
		}
	}
	// Midpoints: bucket 3 holds 5..8, bucket 5 holds 17..32.
	if s, want := read.GetSampleSum(), (5*6.5+2*24.5)*1e-9; math.Abs(s-want) > 1e-15 {
		t.Errorf("read sum %g, want %g", s, want)
	}
}

func TestMapDeclarationErrors(t *testing.T) {
	m := newMap(t, &maps.Spec{Name: "m", Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4})
	wide := newMap(t, &maps.Spec{Name: "wide", Type: maps.Hash, KeySize: 4, ValueSize: 16, MaxEntries: 4})
	for _, tc := range []struct {
		name string
		m    metrics.Map
		want string
	}{
		{"no name", metrics.Map{Map: m, Labels: []metrics.Label{{Name: "k", Size: 8}}}, "no metric name"},
		{"no map", metrics.Map{Name: "x"}, "no map"},
		{"short labels", metrics.Map{Name: "x", Map: m, Labels: []metrics.Label{{Name: "k", Size: 4}}}, "labels cover 4 bytes of its 8-byte key"},
		{"value size", metrics.Map{Name: "x", Map: wide, Labels: []metrics.Label{{Name: "k", Size: 4}}}, "values of 16 bytes"},
		{"odd bucket", metrics.Map{Name: "x", Map: m, Kind: metrics.Histogram, Labels: []metrics.Label{{Name: "k", Size: 5}, {Name: "b", Size: 3}}}, "bucket label"},
		{"odd uint", metrics.Map{Name: "x", Map: m, Labels: []metrics.Label{{Name: "k", Size: 3}, {Name: "s", Size: 5, Decode: metrics.String}}}, `label "k": an integer of 3 bytes`},
		{"bad kind", metrics.Map{Name: "x", Map: m, Kind: 9, Labels: []metrics.Label{{Name: "k", Size: 8}}}, "unknown kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := metrics.NewMapCollector(tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// handler is metrics.Handler of cs.
func handler(t *testing.T, cs ...prometheus.Collector) http.Handler {
	t.Helper()
	h, err := metrics.Handler(cs...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// serve scrapes h over HTTP, as Prometheus does, and parses what it
// reads. Any status but 200 fails the test.
func serve(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %s: %.500s", resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// A comm any process can set (prctl PR_SET_NAME) that is not UTF-8 is
// escaped, reversibly, and the scrape succeeds: through Handler and
// through a pedantic registry that fails on any error.
func TestLabelsNotUTF8(t *testing.T) {
	m := newMap(t, &maps.Spec{Name: "by_comm", Type: maps.Hash, KeySize: 16, ValueSize: 8, MaxEntries: 16})
	h := newMap(t, &maps.Spec{Name: "lat_by_comm", Type: maps.Hash, KeySize: 20, ValueSize: 8, MaxEntries: 16})
	comms := map[string]string{ // the key's bytes: the label
		"nginx":         "nginx",
		"ab\xffcd":      `ab\xffcd`,
		`ab\xffcd`:      `ab\\xffcd`,    // the same text, as bytes, stays apart
		"\xc3\xa9t\xc3": `ét\xc3`,       // a sequence cut short
		"\xed\xa0\x80":  `\xed\xa0\x80`, // a surrogate, which UTF-8 leaves out
		"\xef\xbf\xbd":  "\ufffd",       // U+FFFD itself is valid
		"x\x00\xff\xfe": "x",            // what follows the NUL is not the string
	}
	n := uint64(0)
	for comm := range comms {
		n++
		key := make([]byte, 16)
		copy(key, comm)
		if err := m.Update(key, binary.LittleEndian.AppendUint64(nil, n), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
		if err := h.Update(append(key, 3, 0, 0, 0), binary.LittleEndian.AppendUint64(nil, n), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	// A decoder of its own that returns bytes as they are.
	raw := func(b []byte) (string, error) { return string(b[:3]), nil }
	c, err := metrics.NewMapCollector(
		metrics.Map{Name: "events_total", Help: "Events by comm.", Map: m, Kind: metrics.Counter,
			Labels: []metrics.Label{{Name: "comm", Size: 16, Decode: metrics.String}}},
		metrics.Map{Name: "latency", Help: "Latency by comm.", Map: h, Kind: metrics.Histogram,
			Labels: []metrics.Label{{Name: "comm", Size: 16, Decode: metrics.String}, {Name: "bucket", Size: 4}}},
		metrics.Map{Name: "raw_total", Help: "Events by raw prefix.", Map: m, Kind: metrics.Gauge,
			Labels: []metrics.Label{{Name: "p", Size: 16, Decode: raw}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, fams := range map[string]map[string]*dto.MetricFamily{"Handler": serve(t, handler(t, c)), "pedantic": scrape(t, c)} {
		got := map[string]float64{}
		for _, mt := range fams["events_total"].GetMetric() {
			got[mt.GetLabel()[0].GetValue()] = mt.GetCounter().GetValue()
		}
		hist := map[string]uint64{}
		for _, mt := range fams["latency"].GetMetric() {
			hist[mt.GetLabel()[0].GetValue()] = mt.GetHistogram().GetSampleCount()
		}
		if len(got) != len(comms) || len(hist) != len(comms) {
			t.Errorf("%s: series %v and %v, want %d each", name, got, hist, len(comms))
		}
		for comm, label := range comms {
			if got[label] == 0 || uint64(got[label]) != hist[label] {
				t.Errorf("%s: %q: label %q missing (counter %v, histogram %d)", name, comm, label, got[label], hist[label])
			}
			back, err := metrics.UnescapeString(label)
			if want, _, _ := strings.Cut(comm, "\x00"); err != nil || string(back) != want {
				t.Errorf("UnescapeString(%q) = %q, %v; want %q", label, back, err, want)
			}
		}
		// What other decoders return is escaped only when it is not
		// UTF-8.
		var raws []string
		for _, mt := range fams["raw_total"].GetMetric() {
			raws = append(raws, mt.GetLabel()[0].GetValue())
		}
		for _, want := range []string{"ngi", `ab\xff`, `ab\`, "ét", `\xed\xa0\x80`, "\ufffd", "x\x00\\xff"} {
			if !slices.Contains(raws, want) {
				t.Errorf("%s: raw_total labels %q, want %q among them", name, raws, want)
			}
		}
		if name == "Handler" && fams["go_goroutines"] == nil {
			t.Errorf("Handler: the Go runtime's metrics are missing")
		}
	}
}

// A key a decoder refuses makes that metric invalid, with the reason;
// Handler still serves every other metric, and counts the failure.
func TestMapDecodeError(t *testing.T) {
	m := newMap(t, &maps.Spec{Name: "m", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	for _, k := range []uint32{1, 13} {
		if err := m.Update(k, uint64(k), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	picky := func(b []byte) (string, error) {
		if b[0] == 13 {
			return "", errors.New("unlucky key")
		}
		return metrics.Uint(b)
	}
	c, err := metrics.NewMapCollector(
		metrics.Map{Name: "x_total", Help: "x", Map: m, Labels: []metrics.Label{{Name: "k", Size: 4, Decode: picky}}},
		metrics.Map{Name: "y_total", Help: "y", Map: m, Labels: []metrics.Label{{Name: "k", Size: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), `map "m" key 0d000000: label "k": unlucky key`) {
		t.Errorf("gather: %v", err)
	}
	h := handler(t, c)
	serve(t, h)
	fams := serve(t, h) // the count of the first scrape's failure
	if fams["x_total"] != nil || len(fams["y_total"].GetMetric()) != 2 {
		t.Errorf("x_total %v, y_total %v: want only y_total's two series", fams["x_total"], fams["y_total"])
	}
	var failed float64
	for _, mt := range fams["promhttp_metric_handler_errors_total"].GetMetric() {
		if labelsOf(mt) == "cause=gathering" {
			failed = mt.GetCounter().GetValue()
		}
	}
	if failed != 1 {
		t.Errorf("promhttp_metric_handler_errors_total{cause=gathering} = %v, want 1", failed)
	}
}
