package tracepoint

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// testEvent is the payload of most tests.
type testEvent struct {
	Seq    uint64
	Status uint16
	_      [2]byte
	Code   int32
	Name   [16]byte `tracepoint:"name"`
}

// declare declares a tracepoint with a name unique to the test.
func declare[T any](t testing.TB) *Tracepoint[T] {
	t.Helper()
	tp, err := Declare[T]("test", fmt.Sprintf("tp%d", nextName.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

var nextName atomic.Int64

// loadAsm loads a program written in the conformance dialect.
func loadAsm(t testing.TB, src string) *vm.Program {
	t.Helper()
	p, err := vm.Load(&vm.ProgramSpec{Name: "test", Instructions: asm.MustAssemble(src)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// statusAtLeast500 keeps testEvent records with Status >= 500.
const statusAtLeast500 = `
	ldxh %r2, [%r1+8]
	mov %r0, 0
	jlt %r2, 500, +1
	mov %r0, 1
	exit`

func newSession(t testing.TB, size int) *Session {
	t.Helper()
	s, err := NewSession(&SessionOptions{BufferSize: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// oneP runs the test on one P: a session's events all go to its first
// ring, whose room the test can count.
func oneP(t testing.TB) {
	old := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// recordBytes is what a record of info without vtid and goid takes in a
// ring: the ring's header, the timestamp and the payload, 8-aligned.
func recordBytes(info Info) int { return 8 + 8 + (info.Size+7)&^7 }

// drain reads the records ready in s.
func drain(t testing.TB, s *Session) []Record {
	t.Helper()
	s.SetDeadline(time.Now().Add(-time.Second))
	defer s.SetDeadline(time.Time{})
	var recs []Record
	for {
		r, err := s.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}

func TestDeclareInfo(t *testing.T) {
	tp := declare[testEvent](t)
	info := tp.Info()
	want := []Field{
		{Name: "seq", Kind: Unsigned, Size: 8, Offset: 0},
		{Name: "status", Kind: Unsigned, Size: 2, Offset: 8},
		{Name: "code", Kind: Signed, Size: 4, Offset: 12},
		{Name: "name", Kind: String, Size: 16, Offset: 16},
	}
	if fmt.Sprint(info.Fields) != fmt.Sprint(want) {
		t.Errorf("fields %v, want %v", info.Fields, want)
	}
	if info.Size != 32 || info.Align != 8 || info.RecordSize() != 32+ContextSize {
		t.Errorf("size %d align %d record %d", info.Size, info.Align, info.RecordSize())
	}
	p, err := Lookup(tp.Name())
	if err != nil || p != &tp.Point {
		t.Errorf("Lookup(%q) = %v, %v", tp.Name(), p, err)
	}
	found := false
	for _, q := range List() {
		found = found || q == &tp.Point
	}
	if !found {
		t.Error("List does not hold the tracepoint")
	}
	if _, err := Declare[testEvent]("test", tp.Info().Name); !errors.Is(err, ErrExists) {
		t.Errorf("second declaration: %v, want ErrExists", err)
	}
}

func TestDeclareBadPayloads(t *testing.T) {
	type misaligned struct {
		A uint8
		B [3]byte
		C uint32
		D uint8
		_ [1]uint16
		E uint16
		F uint64
	}
	tests := []struct {
		name string
		decl func() error
	}{
		{"int", func() error { _, err := Declare[struct{ A int }]("bad", "int"); return err }},
		{"string", func() error { _, err := Declare[struct{ A string }]("bad", "string"); return err }},
		{"pointer", func() error { _, err := Declare[struct{ A *int }]("bad", "pointer"); return err }},
		{"slice", func() error { _, err := Declare[struct{ A []byte }]("bad", "slice"); return err }},
		{"not a struct", func() error { _, err := Declare[uint64]("bad", "scalar"); return err }},
		{"array of u32", func() error { _, err := Declare[struct{ A [2]uint32 }]("bad", "arr"); return err }},
		{"unexported", func() error { _, err := Declare[struct{ a uint32 }]("bad", "unexported"); return err }},
		{"nested", func() error { _, err := Declare[struct{ A struct{ B uint8 } }]("bad", "nested"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decl(); !errors.Is(err, ErrBadPayload) {
				t.Errorf("got %v, want ErrBadPayload", err)
			}
		})
	}
	if _, err := Declare[misaligned]("good", "padded"); err != nil {
		t.Errorf("explicitly padded payload: %v", err)
	}
	if _, err := Declare[testEvent]("bad-provider", "x"); err == nil {
		t.Error("a provider that is no C identifier is accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("New with a bad payload did not panic")
		}
	}()
	New[struct{ A int }]("bad", "panics")
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"Status": "status", "DurationUs": "duration_us", "HTTPStatus": "http_status",
		"ID": "id", "Bytes2Read": "bytes2_read", "vtid": "vtid",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFireRecords(t *testing.T) {
	tp := declare[testEvent](t)
	s := newSession(t, 1<<16)
	link, err := s.Enable(tp, VMProgram(loadAsm(t, statusAtLeast500)))
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	for i := range 10 {
		ev := testEvent{Seq: uint64(i), Status: uint16(200 + 100*(i%4)), Code: -int32(i)}
		copy(ev.Name[:], "ev")
		tp.Fire(&ev)
	}
	recs := drain(t, s)
	var seqs []uint64
	for _, r := range recs {
		ev, err := Decode[testEvent](r)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status < 500 || string(ev.Name[:2]) != "ev" || ev.Code != -int32(ev.Seq) {
			t.Errorf("recorded %+v", ev)
		}
		if r.Context.TimestampNs == 0 || r.Context.Vpid != int64(os.Getpid()) || r.Context.Procname[0] == 0 {
			t.Errorf("context %+v", r.Context)
		}
		seqs = append(seqs, ev.Seq)
	}
	if fmt.Sprint(seqs) != "[3 7]" {
		t.Errorf("recorded seqs %v, want [3 7]", seqs)
	}
	want := Stats{Fired: 10, Matched: 2, Recorded: 2}
	if got := tp.Stats(); got != want {
		t.Errorf("tracepoint stats %+v, want %+v", got, want)
	}
	if got := s.Stats(); got != (Stats{Matched: 2, Recorded: 2}) {
		t.Errorf("session stats %+v", got)
	}
	if _, err := Decode[struct{ A uint64 }](recs[0]); !errors.Is(err, ErrType) {
		t.Errorf("Decode into another type: %v", err)
	}
}

func TestSeveralPrograms(t *testing.T) {
	tp := declare[testEvent](t)
	s1, s2 := newSession(t, 1<<16), newSession(t, 1<<16)
	if _, err := s1.Enable(tp); err != nil { // everything
		t.Fatal(err)
	}
	if _, err := s2.Enable(tp, VMProgram(loadAsm(t, statusAtLeast500))); err != nil {
		t.Fatal(err)
	}
	counter, err := Attach(tp, VMProgram(loadAsm(t, "mov %r0, 1\nexit")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		tp.Fire(&testEvent{Seq: uint64(i), Status: uint16(100 * i)})
	}
	if n1, n2 := len(drain(t, s1)), len(drain(t, s2)); n1 != 6 || n2 != 1 {
		t.Errorf("sessions recorded %d and %d, want 6 and 1", n1, n2)
	}
	if got := counter.Stats().Matched; got != 6 {
		t.Errorf("attached program matched %d, want 6", got)
	}
	if got := tp.Stats(); got != (Stats{Fired: 6, Matched: 13, Recorded: 7}) {
		t.Errorf("stats %+v", got)
	}
}

func TestCloseIdempotent(t *testing.T) {
	tp := declare[testEvent](t)
	s := newSession(t, 1<<16)
	link, err := s.Enable(tp)
	if err != nil {
		t.Fatal(err)
	}
	tp.Fire(&testEvent{Seq: 1})
	for range 2 {
		if err := link.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if tp.Enabled() {
		t.Error("enabled after Close")
	}
	tp.Fire(&testEvent{Seq: 2})
	if recs := drain(t, s); len(recs) != 1 {
		t.Errorf("%d records, want 1 (none after Close)", len(recs))
	}
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Enable(tp); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Enable after Close: %v", err)
	}
	if _, err := s.Next(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
}

func TestSessionCloseDetaches(t *testing.T) {
	tp := declare[testEvent](t)
	s := newSession(t, 1<<16)
	for range 3 {
		if _, err := s.Enable(tp); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if tp.Enabled() {
		t.Error("enabled after the session closed")
	}
}

func TestRingFullDropsCounted(t *testing.T) {
	tp := declare[testEvent](t)
	oneP(t)
	s := newSession(t, 4096)
	if _, err := s.Enable(tp); err != nil {
		t.Fatal(err)
	}
	fits := 4096 / recordBytes(tp.Info())
	const fired = 200
	for i := range fired {
		tp.Fire(&testEvent{Seq: uint64(i)})
	}
	recs := drain(t, s)
	st := tp.Stats()
	if len(recs) != fits || st.Recorded != uint64(fits) || st.Dropped != uint64(fired-fits) {
		t.Errorf("%d read, stats %+v; want %d recorded and %d dropped", len(recs), st, fits, fired-fits)
	}
	for i, r := range recs {
		if ev, _ := Decode[testEvent](r); ev.Seq != uint64(i) {
			t.Fatalf("record %d has seq %d", i, ev.Seq)
		}
	}
	if ss := s.Stats(); ss.Dropped != uint64(fired-fits) {
		t.Errorf("session stats %+v", ss)
	}
}

// Attaching and detaching while 8 goroutines fire: a session attached for
// the whole run records every event exactly once.
func TestConcurrentAttachDetach(t *testing.T) {
	tp := declare[testEvent](t)
	s := newSession(t, 1<<22)
	if _, err := s.Enable(tp); err != nil {
		t.Fatal(err)
	}
	const goroutines, perG = 8, 2000
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() { // attach and detach other programs meanwhile
		defer churn.Done()
		other := newSession(t, 1<<16)
		prog := loadAsm(t, statusAtLeast500)
		for {
			select {
			case <-stop:
				return
			default:
			}
			a, err := other.Enable(tp, VMProgram(prog))
			if err != nil {
				t.Error(err)
				return
			}
			b, err := Attach(tp, VMProgram(prog))
			if err != nil {
				t.Error(err)
				return
			}
			a.Close()
			b.Close()
			drain(t, other)
		}
	}()
	var fire sync.WaitGroup
	for g := range goroutines {
		fire.Add(1)
		go func() {
			defer fire.Done()
			for i := range perG {
				tp.Fire(&testEvent{Seq: uint64(g*perG + i), Status: 500})
			}
		}()
	}
	fire.Wait()
	close(stop)
	churn.Wait()
	seen := make([]int, goroutines*perG)
	for _, r := range drain(t, s) {
		ev, err := Decode[testEvent](r)
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.Seq]++
	}
	for seq, n := range seen {
		if n != 1 {
			t.Fatalf("event %d recorded %d times", seq, n)
		}
	}
	if st := s.Stats(); st.Recorded != goroutines*perG || st.Dropped != 0 {
		t.Errorf("session stats %+v", st)
	}
}

func TestContextFieldsOnRequest(t *testing.T) {
	tp := declare[testEvent](t)
	s := newSession(t, 1<<16)
	if _, err := s.Enable(tp, WithThreadID(), WithGoroutineID()); err != nil {
		t.Fatal(err)
	}
	tp.Fire(&testEvent{})
	recs := drain(t, s)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	if c := recs[0].Context; c.Vtid <= 0 || c.Goid == 0 || c.TimestampNs == 0 {
		t.Errorf("context %+v: vtid, goid or timestamp not filled", c)
	}
}

func TestProgramRefusedForShortRecord(t *testing.T) {
	tp := declare[testEvent](t)
	// Reads 8 bytes past the record.
	prog := loadAsm(t, fmt.Sprintf("ldxdw %%r0, [%%r1+%d]\nexit", tp.Info().RecordSize()))
	if _, err := Attach(tp, VMProgram(prog)); err == nil {
		t.Error("a program reading past the record was attached")
	}
	if _, err := Attach(tp); !errors.Is(err, ErrNoProgram) {
		t.Errorf("Attach without a program: %v", err)
	}
}

func TestFireDisabledAllocatesNothing(t *testing.T) {
	tp := declare[testEvent](t)
	ev := testEvent{Seq: 1}
	if n := testing.AllocsPerRun(100, func() { tp.Fire(&ev) }); n != 0 {
		t.Errorf("disabled Fire allocates %v times", n)
	}
	s := newSession(t, 1<<20)
	if _, err := s.Enable(tp, VMProgram(loadAsm(t, statusAtLeast500))); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { tp.Fire(&ev) }); n != 0 {
		t.Errorf("enabled Fire allocates %v times", n)
	}
}

func TestFilterKeepsMatching(t *testing.T) {
	tp := declare[testEvent](t)
	tests := []struct {
		expr string
		want func(ev testEvent) bool
	}{
		{"status >= 500", func(ev testEvent) bool { return ev.Status >= 500 }},
		{"status >= 500 || code < -7", func(ev testEvent) bool { return ev.Status >= 500 || ev.Code < -7 }},
		{`name == "odd*" && seq > 2`, func(ev testEvent) bool { return ev.Seq%2 == 1 && ev.Seq > 2 }},
		{"$ctx.vpid == " + fmt.Sprint(os.Getpid()) + " && $ctx.vtid > 0", func(testEvent) bool { return true }},
		{"$ctx.timestamp == 0", func(testEvent) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			s := newSession(t, 1<<16)
			link, err := s.Enable(tp, Filter(tt.expr))
			if err != nil {
				t.Fatal(err)
			}
			defer link.Close()
			var want []uint64
			for i := range 12 {
				ev := testEvent{Seq: uint64(i), Status: uint16(100 * (i % 6)), Code: -int32(i)}
				copy(ev.Name[:], []string{"even", "odd"}[i%2])
				if tt.want(ev) {
					want = append(want, ev.Seq)
				}
				tp.Fire(&ev)
			}
			var got []uint64
			for _, r := range drain(t, s) {
				ev, _ := Decode[testEvent](r)
				got = append(got, ev.Seq)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("kept %v, want %v", got, want)
			}
		})
	}
	if _, err := Attach(tp, Filter("nosuchfield == 1")); err == nil {
		t.Error("a filter on an unknown field was attached")
	}
}

// fillEvent fills the ring with 0xff.
type fillEvent struct{ B [64]byte }

// smallEvent leaves padding between its payload and the context block.
type smallEvent struct {
	Tag [3]byte
	N   uint8
}

func TestFilterReadsPayloadInPlace(t *testing.T) {
	small := declare[smallEvent](t)
	big := declare[fillEvent](t)
	s := newSession(t, 4096)
	a, err := s.Enable(small, Filter("n >= 2"))
	if err != nil {
		t.Fatal(err)
	}
	if jit.Supported && !a.direct {
		t.Errorf("%v: reads the payload only, yet runs on a copy", a)
	}
	if c, err := Attach(small, Filter("n >= 2 && $ctx.vpid > 0")); err != nil {
		t.Fatal(err)
	} else if c.direct {
		t.Errorf("%v: reads the context, yet runs on the payload", c)
	} else {
		c.Close()
	}
	if _, err := s.Enable(big); err != nil {
		t.Fatal(err)
	}
	// Records of both sizes wrap around the ring several times, so that
	// the small records' padding lands where other bytes were.
	var fill fillEvent
	for j := range fill.B {
		fill.B[j] = 0xff
	}
	for round := range 16 {
		for i := range 20 {
			big.Fire(&fill)
			small.Fire(&smallEvent{Tag: [3]byte{'a', 'b', byte(round)}, N: uint8(i % 4)})
		}
		for _, r := range drain(t, s) {
			if r.Tracepoint != &small.Point {
				continue
			}
			ev, _ := Decode[smallEvent](r)
			if ev.N < 2 || ev.Tag != [3]byte{'a', 'b', byte(round)} {
				t.Fatalf("recorded %+v", ev)
			}
			if len(r.Payload) != small.Info().Size {
				t.Fatalf("payload of %d bytes", len(r.Payload))
			}
			if r.Context.TimestampNs == 0 || r.Context.Vpid != int64(os.Getpid()) {
				t.Fatalf("context %+v", r.Context)
			}
		}
	}
	// A payload on the stack stays there.
	if n := testing.AllocsPerRun(100, func() {
		ev := smallEvent{N: 1}
		small.Fire(&ev)
	}); n != 0 {
		t.Errorf("enabled Fire allocates %v times", n)
	}
}

// goid reads the goroutine id from the runtime's struct where it finds
// its offset (amd64 and arm64), and agrees with the stack trace header
// in every goroutine, including ones started after the offset was found.
func TestGoid(t *testing.T) {
	if off := goidOffset(); off < 0 {
		if getg() != nil {
			t.Fatalf("no offset of the goroutine id found in g on %s", runtime.GOARCH)
		}
		t.Skipf("no getg on %s: goid parses stack traces", runtime.GOARCH)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 64 {
		wg.Go(func() {
			if got, want := goid(), goidFromStack(); got != want {
				errs <- fmt.Sprintf("goid() = %d, stack trace says %d", got, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got, want := goid(), goidFromStack(); got != want {
		t.Errorf("test goroutine: goid() = %d, stack trace says %d", got, want)
	}
}
