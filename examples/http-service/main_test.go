package main

import (
	"strings"
	"testing"
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
