package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/uebpf/uebpf/control"
	"github.com/uebpf/uebpf/tracepoint"
)

// The walkthrough prints the failed and the slow requests, and no other
// (a fast request that a loaded machine made slower than 20 ms would be
// right to appear: it is counted, not refused).
func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := runDemo(&out, 16); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if lines[0] != `attached "status >= 500 || duration_us > 20000" to http:request_done` {
		t.Errorf("first line %q", lines[0])
	}
	count := map[string]int{}
	for _, l := range lines[1 : len(lines)-1] {
		switch {
		case l == "GET /fail status=500 bytes=7 (failed)", l == "GET /slow status=200 bytes=5 (slow)":
			count[l]++
		case strings.HasSuffix(l, "(slow)"):
			t.Logf("a fast request was slow: %s", l)
		default:
			t.Errorf("unexpected event %q", l)
		}
	}
	if len(count) != 2 || count["GET /fail status=500 bytes=7 (failed)"] != 2 || count["GET /slow status=200 bytes=5 (slow)"] != 2 {
		t.Errorf("events %v, want two failed and two slow:\n%s", count, out.String())
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "16 requests, ") || !strings.HasSuffix(last, " 0 dropped") {
		t.Errorf("last line %q", last)
	}
}

// /metrics serves the tracepoints' counters in Prometheus' format.
func TestMetrics(t *testing.T) {
	ln, err := serveMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := tracepoint.Attach(reqDone, tracepoint.Filter(slowFilter))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	before := reqDone.Stats()
	srv := httptest.NewServer(handler())
	defer srv.Close()
	for _, path := range []string{"/ok", "/fail", "/ok"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, name := range []string{"uebpf_tracepoint_fired_total", "uebpf_tracepoint_matched_total"} {
		for _, m := range fams[name].GetMetric() {
			if m.GetLabel()[0].GetValue() == "http:request_done" {
				got[name] = m.GetCounter().GetValue()
			}
		}
	}
	if got["uebpf_tracepoint_fired_total"] != float64(before.Fired+3) || got["uebpf_tracepoint_matched_total"] != float64(before.Matched+1) {
		t.Errorf("counters %v, want 3 more fired and 1 more matched than %+v", got, before)
	}
}

// Another process's view: through the control socket, a client enables
// the filter on http:request_done and streams only the failed request.
func TestControl(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := control.Listen(ctx, &control.Options{Path: filepath.Join(t.TempDir(), "ctl.sock")})
	if errors.Is(err, control.ErrUnsupported) {
		t.Skip("no control socket on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := control.Dial(srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.Enable(control.EnableOptions{Tracepoint: "http:request_done", Filter: "status >= 500"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Stream(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(handler())
	defer web.Close()
	for _, path := range []string{"/ok", "/fail", "/missing"} {
		resp, err := http.Get(web.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	next, done := context.WithTimeout(ctx, 10*time.Second)
	defer done()
	ev, err := stream.Next(next)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Tracepoint != "http:request_done" || ev.Fields.Get("path") != "/fail" || fmt.Sprint(ev.Fields.Get("status")) != "500" {
		t.Errorf("event %s %v, want the failed request", ev.Tracepoint, ev.Fields)
	}
	if _, err := c.Disable(sess.ID); err != nil {
		t.Fatal(err)
	}
}
