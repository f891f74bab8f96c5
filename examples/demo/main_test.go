package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/uebpf/uebpf"
)

// TestRunFilter checks the demo's output for events with known latencies,
// on every engine it shows.
func TestRunFilter(t *testing.T) {
	slow, fast := uint64(threshold.Nanoseconds()), uint64(threshold.Nanoseconds()-1)
	events := []event{{PID: 1, LatencyNs: slow}, {PID: 1, LatencyNs: fast}, {PID: 2, LatencyNs: slow}, {PID: 1, LatencyNs: 2 * slow}}
	for _, engine := range []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineAuto} {
		r, w, _ := os.Pipe()
		stdout := os.Stdout
		os.Stdout = w
		err := runFilter(engine, events)
		os.Stdout = stdout
		w.Close()
		out, _ := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"worker 1: 2 slow calls", "worker 2: 1 slow calls"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%v: output lacks %q:\n%s", engine, want, out)
			}
		}
	}
}
