package metrics

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler returns an http.Handler serving the collectors, with the Go
// runtime's and the process's own metrics, in a registry of their own.
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
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}), nil
}
