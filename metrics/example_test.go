package metrics_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/metrics"
)

// A map of request counts by HTTP status, as a program fills it, served
// as a Prometheus counter.
func Example() {
	m, err := maps.New(&maps.Spec{Name: "status_counts", Type: maps.Hash, KeySize: 2, ValueSize: 8, MaxEntries: 64})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	m.Update(uint16(200), uint64(42), maps.UpdateAny)
	m.Update(uint16(503), uint64(3), maps.UpdateAny)

	c, err := metrics.NewMapCollector(metrics.Map{
		Name: "http_responses_total", Help: "Responses by status.",
		Map: m, Kind: metrics.Counter,
		Labels: []metrics.Label{{Name: "status", Size: 2}},
	})
	if err != nil {
		panic(err)
	}
	h, err := metrics.Handler(c)
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "http_responses_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// http_responses_total{status="200"} 42
	// http_responses_total{status="503"} 3
}

// A comm in Latin-1, as any process may name itself: the label is valid
// UTF-8, and the bytes come back from it.
func ExampleString() {
	label, _ := metrics.String([]byte("caf\xe9\x00\x00\x00\x00"))
	fmt.Println(label)
	b, _ := metrics.UnescapeString(label)
	fmt.Printf("%q\n", b)
	// Output:
	// caf\xe9
	// "caf\xe9"
}
