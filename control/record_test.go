package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// A streamed event, laid out again from its fields and the layout the
// server lists, is the payload that was fired, byte for byte: what
// Client.Record writes into a trace is what the application recorded.
func TestEncodeEventRoundTrip(t *testing.T) {
	type allKinds struct {
		U8   uint8
		S8   int8
		_    [6]byte // padding of the Go struct's own, which the layout keeps
		U16  uint16
		S16  int16
		S32  int32
		F32  float32
		F64  float64
		B    bool
		Str  [7]byte
		Full [3]byte // no NUL
		U64  uint64
		S64  int64
		Inf  float32
		NInf float32
		Tiny float32
	}
	_, tps := declare[allKinds](t, "kinds")
	p := &tps[0].Point
	v := allKinds{U8: 255, S8: -128, U16: 65535, S16: -2, S32: math.MinInt32, F32: 0.1, F64: -1e300, B: true,
		U64: math.MaxUint64, S64: math.MinInt64, Inf: float32(math.Inf(1)), NInf: float32(math.Inf(-1)),
		Tiny: math.SmallestNonzeroFloat32}
	copy(v.Str[:], "a\"\x01<")
	copy(v.Full[:], "xyz")
	payload := unsafeBytes(&v)
	rec := tracepoint.Record{Tracepoint: p, Payload: payload}
	rec.Context.TimestampNs, rec.Context.Vpid, rec.Context.Vtid, rec.Context.Goid = 12, 34, 56, 78
	copy(rec.Context.Procname[:], "proc")
	var ev Event
	if err := json.Unmarshal(appendEvent(nil, &rec, p.Name(), p.Info().Fields), &ev); err != nil {
		t.Fatal(err)
	}
	tis, err := listTracepoints(p.Name(), true)
	if err != nil {
		t.Fatal(err)
	}
	info, err := tis[0].Info()
	if err != nil {
		t.Fatal(err)
	}
	got, ctx, err := encodeEvent(info, &ev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Errorf("payload\n got %x\nwant %x", got, payload)
	}
	if *ctx != rec.Context {
		t.Errorf("context %+v, want %+v", *ctx, rec.Context)
	}

	// What a server could send that does not fit is an error, not a
	// panic or a wrong trace.
	for _, bad := range []TracepointInfo{
		{Name: "a:b", Size: 4, Fields: []FieldInfo{{Name: "x", Type: "u64", Offset: 0, Size: 8}}},
		{Name: "a:b", Size: 8, Fields: []FieldInfo{{Name: "x", Type: "u32", Offset: 6, Size: 4}}},
		{Name: "a:b", Size: 8, Fields: []FieldInfo{{Name: "x", Type: "u32", Offset: -1, Size: 4}}},
		{Name: "a:b", Size: 8, Fields: []FieldInfo{{Name: "x", Type: "u32", Offset: 0, Size: 2}}},
		{Name: "a:b", Size: 8, Fields: []FieldInfo{{Name: "x", Type: "i32", Offset: 0, Size: 4}}},
		{Name: "ab", Size: 8, Fields: []FieldInfo{{Name: "x", Type: "u32", Offset: 0, Size: 4}}},
		{Name: "a:b", Size: 1 << 40, Fields: []FieldInfo{{Name: "x", Type: "u32", Offset: 0, Size: 4}}},
		{Name: "a:b", Size: -8},
	} {
		if _, err := bad.Info(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	for _, fields := range []Fields{
		{{"x", "str"}},
		{{"y", int64(1)}},
		{{"x", 1.5}},
	} {
		info := tracepoint.Info{Provider: "a", Name: "b", Size: 4, Fields: []tracepoint.Field{{Name: "x", Kind: tracepoint.Unsigned, Size: 4}}}
		if _, _, err := encodeEvent(info, &Event{Fields: fields}); err == nil {
			t.Errorf("fields %v: no error", fields)
		}
	}
}

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
	if err := c.Record(ctx, sess.ID, dir); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bt, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2: %v\n%s", err, out)
	}
	var got []string
	for l := range strings.Lines(string(out)) {
		if !strings.Contains(l, fmt.Sprintf("vpid = %d,", os.Getpid())) || !strings.Contains(l, provider+":request:") {
			t.Errorf("line %q", l)
		}
		_, fields, _ := strings.Cut(l, "}, { ")
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
