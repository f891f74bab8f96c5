package tracepoint

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/uebpf/uebpf/internal/channel"
)

// TestRecordedOncePerSession: an event that two attachments of one session
// keep is one record; each attachment counts its match, the session one
// event. Another session records it too.
func TestRecordedOncePerSession(t *testing.T) {
	tp := declare[testEvent](t)
	s, other := newSession(t, 1<<20), newSession(t, 1<<20)
	a1, err := s.Enable(tp, Filter("status >= 500"))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := s.Enable(tp, Filter("code == 7"))
	if err != nil {
		t.Fatal(err)
	}
	a3, err := other.Enable(tp)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for i := range n {
		tp.Fire(&testEvent{Seq: uint64(i), Status: 503, Code: 7})
	}
	if got := len(drain(t, s)); got != n {
		t.Errorf("session kept %d records of %d events that both its attachments keep", got, n)
	}
	if got := len(drain(t, other)); got != n {
		t.Errorf("the other session kept %d of %d", got, n)
	}
	for i, a := range []*Attachment{a1, a2, a3} {
		if st := a.Stats(); st.Matched != n {
			t.Errorf("attachment %d: %+v, want %d matched", i+1, st, n)
		}
	}
	st1, st2 := a1.Stats(), a2.Stats()
	if st1.Recorded+st2.Recorded != n {
		t.Errorf("the attachments recorded %d + %d, want %d in all", st1.Recorded, st2.Recorded, n)
	}
	if st := s.Stats(); st.Matched != n || st.Recorded != n || st.Dropped != 0 {
		t.Errorf("session %+v, want %d matched and recorded", st, n)
	}
	if st := tp.Stats(); st.Fired != n {
		t.Errorf("tracepoint fired %d, want %d", st.Fired, n)
	}
}

// TestContextCollected: a record says which of vtid and goid it carries;
// those not collected are not made up.
func TestContextCollected(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want Collected
	}{
		{"none", nil, 0},
		{"vtid", []Option{WithThreadID()}, HasVtid},
		{"goid", []Option{WithGoroutineID()}, HasGoid},
		{"both", []Option{WithThreadID(), WithGoroutineID()}, HasVtid | HasGoid},
		{"filter on vtid", []Option{Filter("$ctx.vtid > 0")}, HasVtid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := declare[testEvent](t)
			s := newSession(t, 1<<16)
			if _, err := s.Enable(tp, tc.opts...); err != nil {
				t.Fatal(err)
			}
			tp.Fire(&testEvent{Seq: 9})
			recs := drain(t, s)
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			if r.Has != tc.want {
				t.Errorf("has %b, want %b", r.Has, tc.want)
			}
			if (r.Context.Vtid != 0) != (tc.want&HasVtid != 0) || (r.Context.Goid != 0) != (tc.want&HasGoid != 0) {
				t.Errorf("context %+v for %b", r.Context, r.Has)
			}
			if r.Context.Vpid != int64(os.Getpid()) || r.Context.TimestampNs == 0 {
				t.Errorf("context %+v", r.Context)
			}
			if ev, _ := Decode[testEvent](r); ev.Seq != 9 {
				t.Errorf("payload %+v", ev)
			}
		})
	}
}

func TestSessionModes(t *testing.T) {
	t.Run("overwrite keeps the newest", func(t *testing.T) {
		oneP(t)
		tp := declare[testEvent](t)
		s, err := NewSession(&SessionOptions{BufferSize: 4096, Mode: Overwrite})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Enable(tp); err != nil {
			t.Fatal(err)
		}
		const n = 500
		for i := range n {
			tp.Fire(&testEvent{Seq: uint64(i)})
		}
		recs := drain(t, s)
		if len(recs) == 0 || len(recs) >= n {
			t.Fatalf("%d records of %d", len(recs), n)
		}
		if ev, _ := Decode[testEvent](recs[len(recs)-1]); ev.Seq != n-1 {
			t.Errorf("newest record is %d, want %d", ev.Seq, n-1)
		}
		if st := s.Stats(); st.Recorded != n || st.Dropped != 0 {
			t.Errorf("stats %+v", st)
		}
		if st := s.ChannelStats(); st.Overwritten == 0 || st.Records != n {
			t.Errorf("channel stats %+v", st)
		}
	})
	t.Run("block loses nothing", func(t *testing.T) {
		tp := declare[testEvent](t)
		s, err := NewSession(&SessionOptions{BufferSize: 8192, Mode: Block, BlockTimeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Enable(tp); err != nil {
			t.Fatal(err)
		}
		const n, writers = 20000, 4
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range n {
					tp.Fire(&testEvent{Seq: uint64(i), Code: int32(w)})
				}
			})
		}
		got := 0
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for finished := false; ; {
			recs := drain(t, s)
			got += len(recs)
			if finished && len(recs) == 0 {
				break
			}
			select {
			case <-done:
				finished = true
			default:
			}
		}
		if st := s.Stats(); got != n*writers || st.Dropped != 0 {
			t.Errorf("read %d of %d, stats %+v", got, n*writers, st)
		}
	})
}

func TestSessionLimits(t *testing.T) {
	tp := declare[testEvent](t)
	s, err := NewSession(&SessionOptions{MaxAttachments: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var atts []*Attachment
	for range 3 {
		a, err := s.Enable(tp)
		if err != nil {
			t.Fatal(err)
		}
		atts = append(atts, a)
	}
	if _, err := s.Enable(tp); !errors.Is(err, ErrTooManyAttachments) {
		t.Errorf("a fourth attachment: %v", err)
	}
	type big struct{ B [8192]byte }
	huge := declare[big](t)
	if _, err := newSession(t, 4096).Enable(huge); err == nil {
		t.Error("a record larger than the rings was enabled")
	}
	atts[0].Close()
	atts = nil
	// The slot comes back once the collector freed the attachment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.Enable(tp); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed attachment's slot never came back")
		}
		collect()
	}
}

// TestFileBackedRecovery: what a file-backed session committed reads back
// from its file alone, as after a crash (the file is read while the
// session still holds it: the same bytes).
func TestFileBackedRecovery(t *testing.T) {
	if !channel.Shared {
		t.Skip("file-backed sessions need Linux")
	}
	path := filepath.Join(t.TempDir(), "session.ring")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	tp := declare[testEvent](t)
	other := declare[smallEvent](t)
	s, err := NewSession(&SessionOptions{File: f, Mode: Overwrite})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enable(tp, WithThreadID()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enable(other); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		tp.Fire(&testEvent{Seq: uint64(i), Status: 200})
		other.Fire(&smallEvent{N: uint8(i)})
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseChannel(b)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	if _, err := r.ReadAll(0, func(ev *Event) {
		counts[ev.Info.FullName()]++
		if ev.Info.FullName() == tp.Name() {
			if ev.Has != HasVtid || ev.Vtid == 0 || Value(ev.Info.Fields[1], ev.Payload) != uint64(200) {
				t.Errorf("recovered %+v", ev)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if counts[tp.Name()] != 100 || counts[other.Name()] != 100 {
		t.Errorf("recovered %v, want 100 of each", counts)
	}
	if pid, name, _ := r.Process(); pid != os.Getpid() || name == "" {
		t.Errorf("process %d %q", pid, name)
	}
}

// TestFilesMapChannel reads a session through the files a consumer in
// another process gets.
func TestFilesMapChannel(t *testing.T) {
	if !channel.Shared {
		t.Skip("channels are shared on Linux only")
	}
	tp := declare[testEvent](t)
	s := newSession(t, 1<<16)
	if _, err := s.Enable(tp); err != nil {
		t.Fatal(err)
	}
	d, p, err := s.Files()
	if err != nil {
		t.Fatal(err)
	}
	r, err := MapChannel(d, p)
	d.Close()
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range 10 {
		tp.Fire(&testEvent{Seq: uint64(i)})
	}
	var seqs []uint64
	r.ReadAll(0, func(ev *Event) { seqs = append(seqs, Value(ev.Info.Fields[0], ev.Payload).(uint64)) })
	if len(seqs) != 10 {
		t.Errorf("read %v", seqs)
	}
	s.Close()
	if !r.Closed() {
		t.Error("the channel is not closed after its session")
	}
}

// collect runs the collector and its cleanups.
func collect() {
	runtime.GC()
	time.Sleep(time.Millisecond)
}
