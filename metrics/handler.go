package metrics

import (
	"fmt"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler returns an http.Handler serving the collectors, with the Go
// runtime's and the process's own metrics, in a registry of their own. A
// collector that fails loses its own metrics only: the scrape serves the
// others, and promhttp_metric_handler_errors_total counts the failure.
func Handler(cs ...prometheus.Collector) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	cs = append([]prometheus.Collector{
		prometheus.NewGoCollector(),
		prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	}, cs...)
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, ErrorHandling: promhttp.ContinueOnError}), nil
}

// Serve serves the collectors (see Handler) at addr/metrics in the
// background, until the returned listener is closed.
func Serve(addr string, cs ...prometheus.Collector) (net.Listener, error) {
	h, err := Handler(cs...)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	go http.Serve(ln, mux)
	return ln, nil
}
