package metrics_test

import (
	"encoding/binary"
	"math"
	"net/http/httptest"
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

// A key a decoder refuses fails that metric's scrape with the reason, and
// not the others.
func TestMapDecodeError(t *testing.T) {
	m := newMap(t, &maps.Spec{Name: "m", Type: maps.Hash, KeySize: 3, ValueSize: 8, MaxEntries: 4})
	if err := m.Update([]byte{1, 2, 3}, make([]byte, 8), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	c, err := metrics.NewMapCollector(metrics.Map{Name: "x_total", Help: "x", Map: m, Labels: []metrics.Label{{Name: "k", Size: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "an integer of 3 bytes") {
		t.Errorf("gather: %v", err)
	}
}
