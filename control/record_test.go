package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// Client.Record writes a session's events into a CTF trace that
// babeltrace2 reads back: every event, in order, with its fields and
// the application's pid.
func TestRecord(t *testing.T) {
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Skip("babeltrace2 is not installed (Debian package babeltrace2)")
	}
	provider, tps := declare[reqEvent](t, "request")
	s := startServer(t, nil)
	c := dial(t, s.Path())
	sess, err := c.Enable(EnableOptions{Tracepoint: provider + ":request", Filter: "status >= 500"})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 20 {
		ev := event(uint64(i), uint16(200+100*(i%4)), "GET", int64(-i))
		tps[0].Fire(&ev)
		if ev.Status >= 500 {
			want = append(want, fmt.Sprintf("seq = %d, status = %d, method = \"GET\", duration_us = %d, ratio = %g", i, ev.Status, -i, ev.Ratio))
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	st, err := c.Record(ctx, sess.ID, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != uint64(len(want)) || st.Dropped != 0 || st.Chunks != 1 {
		t.Errorf("record stats %+v, want %d events", st, len(want))
	}
	out, err := exec.Command(bt, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2: %v\n%s", err, out)
	}
	var got []string
	for l := range strings.Lines(string(out)) {
		if !strings.Contains(l, provider+":request:") {
			t.Errorf("line %q", l)
		}
		_, fields, _ := strings.Cut(l, ": { ")
		fields, _, _ = strings.Cut(fields, ", ok = ")
		got = append(got, fields)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("babeltrace2 read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// WriteJSON writes a session's events as JSON lines that decode to the
// events fired, and returns when its context ends.
func TestWriteJSON(t *testing.T) {
	provider, tps := declare[reqEvent](t, "request")
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enable(tps[0], tracepoint.Filter("status >= 500")); err != nil {
		t.Fatal(err)
	}
	var fired []reqEvent
	for i := range 10 {
		ev := event(uint64(i), uint16(200+100*(i%4)), "PUT", int64(i))
		tps[0].Fire(&ev)
		if ev.Status >= 500 {
			fired = append(fired, ev)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	if err := WriteJSON(ctx, s, &out); err != nil {
		t.Fatal(err)
	}
	var n int
	for l := range strings.Lines(out.String()) {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		if n < len(fired) {
			checkEvent(t, e, provider+":request", fired[n])
		}
		n++
	}
	if n != len(fired) {
		t.Errorf("%d lines, want %d:\n%s", n, len(fired), out.String())
	}
}
