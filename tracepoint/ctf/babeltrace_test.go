//go:build linux

package ctf_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uebpf/uebpf/internal/clock"
	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

type intsEv struct {
	S64 int64
	U64 uint64
	U32 uint32
	S32 int32
	U16 uint16
	S16 int16
	U8  uint8
	S8  int8
	_   [2]byte
}

type mixedEv struct {
	Name  [12]byte
	OK    bool
	_     [1]byte
	Align uint16 `tracepoint:"align"` // a TSDL keyword
	F32   float32
	_     [4]byte
	F64   float64
}

type emptyEv struct{}

var (
	intsTP  = tracepoint.New[intsEv]("ctftest_e2e", "ints")
	mixedTP = tracepoint.New[mixedEv]("ctftest_e2e", "mixed")
	emptyTP = tracepoint.New[emptyEv]("ctftest_e2e", "empty")
)

// babeltrace returns the lines babeltrace2 prints for the trace in dir,
// and what it says on stderr; it skips the test where it is missing.
func babeltrace(t *testing.T, dir string, args ...string) (lines []string, stderr string) {
	t.Helper()
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Skip("babeltrace2 is not installed (Debian package babeltrace2)")
	}
	cmd := exec.Command(bt, append(append([]string{"--clock-seconds", "--no-delta"}, args...), dir)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("babeltrace2 %s: %v\n%s", dir, err, errb.String())
	}
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil, errb.String()
	}
	return strings.Split(s, "\n"), errb.String()
}

// clockOffset reads the clock's offset from the Unix epoch, in ns, from a
// trace's metadata.
func clockOffset(t *testing.T, dir string) int64 {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(dir, ctf.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	sec := regexp.MustCompile(`\boffset_s = (-?\d+);`).FindSubmatch(m)
	ns := regexp.MustCompile(`\boffset = (\d+);`).FindSubmatch(m)
	if sec == nil || ns == nil {
		t.Fatalf("no clock offset in metadata:\n%s", m)
	}
	s, _ := strconv.ParseInt(string(sec[1]), 10, 64)
	n, _ := strconv.ParseInt(string(ns[1]), 10, 64)
	return s*1e9 + n
}

// lineRE splits a line of babeltrace2's text output (--clock-seconds,
// --no-delta): timestamp, trace name, event name, context and payload.
var lineRE = regexp.MustCompile(`^\[(\d+)\.(\d{9})\] (\S+) (\S+): \{ (.*?) \}, \{ ?(.*?) ?\}$`)

func TestBabeltrace(t *testing.T) {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tp := range []tracepoint.Target{intsTP, mixedTP, emptyTP} {
		if _, err := s.Enable(tp, tracepoint.WithThreadID(), tracepoint.WithGoroutineID()); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := ctf.Record(ctx, s, dir, ctf.Hostname("testhost")); done <- err }()

	// Fire from one locked thread, so that vtid is known, and note when
	// each event fired.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := int64(syscall.Gettid())
	type fired struct {
		name, payload string
		from, to      int64
	}
	var want []fired
	fire := func(name, payload string, f func()) {
		from := clock.Now()
		f()
		want = append(want, fired{name, payload, from, clock.Now()})
	}
	ints := []intsEv{
		{S64: math.MinInt64, U64: math.MaxUint64, U32: math.MaxUint32, S32: math.MinInt32, U16: math.MaxUint16, S16: math.MinInt16, U8: math.MaxUint8, S8: math.MinInt8},
		{S64: math.MaxInt64, U64: 0, U32: 1, S32: math.MaxInt32, U16: 2, S16: math.MaxInt16, U8: 3, S8: math.MaxInt8},
		{S64: -1, U64: 1 << 63, U32: 1 << 31, S32: -1, U16: 1 << 15, S16: -1, U8: 1 << 7, S8: -1},
	}
	mixed := []struct {
		name string
		ok   bool
		f32  float32
		f64  float64
	}{
		{"hello", true, 1.5, -2.25e10},
		{"twelve bytes", false, -0.125, 3.5e-300},
		{"", true, 0, math.Inf(1)},
		{`quote"back\`, false, 65536, 0.1},
	}
	for i := range 4 {
		if i < len(ints) {
			ev := ints[i]
			fire("ctftest_e2e:ints", fmt.Sprintf("s64 = %d, u64 = %d, u32 = %d, s32 = %d, u16 = %d, s16 = %d, u8 = %d, s8 = %d",
				ev.S64, ev.U64, ev.U32, ev.S32, ev.U16, ev.S16, ev.U8, ev.S8), func() { intsTP.Fire(&ev) })
		}
		m := mixed[i]
		ev := mixedEv{OK: m.ok, Align: uint16(i), F32: m.f32, F64: m.f64}
		copy(ev.Name[:], m.name)
		fire("ctftest_e2e:mixed", fmt.Sprintf(`name = %q, ok = ( "%t" : container = %d ), align = %d, f32 = %s, f64 = %s`,
			m.name, m.ok, b2i(m.ok), i, gfmt(float64(m.f32)), gfmt(m.f64)), func() { mixedTP.Fire(&ev) })
		fire("ctftest_e2e:empty", "", func() { emptyTP.Fire(&emptyEv{}) })
	}
	now := time.Now()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	lines, stderr := babeltrace(t, dir)
	if len(lines) != len(want) {
		t.Fatalf("babeltrace2 printed %d events, want %d:\n%s\n%s", len(lines), len(want), strings.Join(lines, "\n"), stderr)
	}
	if stderr != "" {
		t.Errorf("babeltrace2 warns:\n%s", stderr)
	}
	off := clockOffset(t, dir)
	var goid string
	for i, line := range lines {
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %d: cannot read %q", i, line)
		}
		w := want[i]
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		ns, _ := strconv.ParseInt(m[2], 10, 64)
		// The timestamp is the event's CLOCK_MONOTONIC, read while it
		// fired, plus the offset: a wall-clock time.
		if ts := sec*1e9 + ns - off; ts < w.from || ts > w.to {
			t.Errorf("line %d: timestamp %d is not when the event fired (%d..%d)", i, ts, w.from, w.to)
		}
		if d := time.Unix(sec, ns).Sub(now); d < -time.Minute || d > time.Second {
			t.Errorf("line %d: wall-clock time %v is %v from now", i, time.Unix(sec, ns), d)
		}
		if m[3] != "testhost" && !strings.HasPrefix(m[3], "testhost:") {
			t.Errorf("line %d: trace %q, want the hostname testhost", i, m[3])
		}
		if m[4] != w.name {
			t.Errorf("line %d: event %s, want %s", i, m[4], w.name)
		}
		wantCtx := fmt.Sprintf(`vtid = %d, goid = (\d+)`, tid)
		c := regexp.MustCompile("^" + wantCtx + "$").FindStringSubmatch(m[5])
		switch {
		case c == nil:
			t.Errorf("line %d: context { %s }, want { %s }", i, m[5], wantCtx)
		case c[1] == "0":
			t.Errorf("line %d: goroutine id 0", i)
		case goid != "" && c[1] != goid:
			t.Errorf("line %d: goroutine %s, the events before were from %s", i, c[1], goid)
		default:
			goid = c[1]
		}
		if m[6] != w.payload {
			t.Errorf("line %d: payload\n\t{ %s }, want\n\t{ %s }", i, m[6], w.payload)
		}
	}
	if t.Failed() {
		t.Logf("babeltrace2:\n%s", strings.Join(lines, "\n"))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gfmt formats a float as babeltrace2 prints it: C's %g.
func gfmt(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', 6, 64)
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		if len(exp) == 2 { // e+5 is e+05 in C
			exp = exp[:1] + "0" + exp[1:]
		}
		return mant + "e" + exp
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// TestBabeltraceWhileWriting reads a trace before Close: after Flush, the
// trace on disk holds every event written, with the classes declared
// since the last read, and discarded events are reported where they were
// lost.
func TestBabeltraceWhileWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	w, err := ctf.Create(dir, ctf.PacketSize(ctf.MinPacketSize))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ts := uint64(clock.Now())
	write := func(p *tracepoint.Point, n int) {
		for range n {
			ts++
			r := tracepoint.Record{Tracepoint: p, Payload: make([]byte, p.Info().Size), Context: tracepoint.Context{TimestampNs: ts}}
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(want int, warning string) {
		t.Helper()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		lines, stderr := babeltrace(t, dir)
		if len(lines) != want {
			t.Errorf("babeltrace2 read %d events, want %d:\n%s", len(lines), want, strings.Join(lines, "\n"))
		}
		if warning == "" && stderr != "" || !strings.Contains(stderr, warning) {
			t.Errorf("babeltrace2 says %q, want %q", stderr, warning)
		}
	}
	write(&intsTP.Point, 100) // 2 packets and a bit
	count(100, "")
	write(&mixedTP.Point, 3)
	w.SetDiscarded(0, 42)
	write(&emptyTP.Point, 2)
	count(105, "discarded 42 events")
}

// TestRecordFlushInterval reads a trace Record is writing: with
// FlushInterval, events reach the disk without filling a packet. Closing
// the session ends Record.
func TestRecordFlushInterval(t *testing.T) {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enable(emptyTP); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	done := make(chan error, 1)
	go func() {
		_, err := ctf.Record(context.Background(), s, dir, ctf.FlushInterval(10*time.Millisecond))
		done <- err
	}()
	for range 3 {
		emptyTP.Fire(&emptyEv{})
	}
	// The events are in the streams of the rings they went to.
	onDisk := func() int64 {
		var n int64
		files, _ := filepath.Glob(filepath.Join(dir, "stream_*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	for start := time.Now(); onDisk() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("no packet on disk after 10s")
		}
	}
	time.Sleep(50 * time.Millisecond) // every ring's flush
	if lines, _ := babeltrace(t, dir); len(lines) != 3 {
		t.Errorf("babeltrace2 read %d events while recording, want 3", len(lines))
	}
	s.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Record still running 10s after the session closed")
	}
	if lines, _ := babeltrace(t, dir); len(lines) != 3 {
		t.Errorf("babeltrace2 read %d events after Record, want 3", len(lines))
	}
}

// TestRecordDrops records a session whose ring overflowed: the trace holds
// the events it kept and says how many it dropped.
func TestRecordDrops(t *testing.T) {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enable(emptyTP); err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		emptyTP.Fire(&emptyEv{})
	}
	st := s.Stats()
	if st.Dropped == 0 {
		t.Fatalf("a 4 KiB ring took 2000 events: %+v", st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // write what the session holds
	dir := filepath.Join(t.TempDir(), "trace")
	if _, err := ctf.Record(ctx, s, dir); err != nil {
		t.Fatal(err)
	}
	lines, stderr := babeltrace(t, dir)
	if uint64(len(lines)) != st.Recorded {
		t.Errorf("babeltrace2 read %d events, the session recorded %d", len(lines), st.Recorded)
	}
	if want := fmt.Sprintf("discarded %d events", st.Dropped); !strings.Contains(stderr, want) {
		t.Errorf("babeltrace2 says %q, want %q", stderr, want)
	}
}
