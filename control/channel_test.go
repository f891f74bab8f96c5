package control

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// TestChannelConsumer: one connection at a time holds a session's
// channel; a release or a disconnect gives it back, and the next consumer
// starts after what the last one read. A snapshot reads beside it.
func TestChannelConsumer(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, nil)
	a, b := dial(t, s.Path()), dial(t, s.Path())
	si, err := a.Enable(EnableOptions{Tracepoint: tp.Name(), Mode: "overwrite"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := a.Channel(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Channel(si.ID); !errors.Is(err, ErrBusy) {
		t.Errorf("a second consumer: %v, want ErrBusy", err)
	}
	if _, err := a.Channel(si.ID); !errors.Is(err, ErrBusy) {
		t.Errorf("the same consumer again: %v, want ErrBusy", err)
	}
	for i := range 10 {
		ev := event(uint64(i), 200, "GET", 1)
		tp.Fire(&ev)
	}
	// A snapshot reads what the rings hold without taking it.
	snap, err := b.Snapshot(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, err := readAll(snap)
	if err != nil || n != 10 {
		t.Errorf("snapshot read %d, %v; want 10", n, err)
	}
	snap.Close()
	if n, err := readAll(ch); err != nil || n != 10 {
		t.Errorf("the consumer read %d, %v; want 10", n, err)
	}
	_, sessions, _ := b.Stats("")
	if len(sessions) != 1 || !sessions[0].Consumed {
		t.Errorf("sessions %+v: want session %d consumed", sessions, si.ID)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	ch2, err := b.Channel(si.ID)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	ev := event(10, 200, "GET", 1)
	tp.Fire(&ev)
	if n, _ := readAll(ch2); n != 1 {
		t.Errorf("the next consumer read %d, want the 1 event after the last one read", n)
	}
	// A consumer that hangs up gives the channel back too.
	b.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ch3, err := a.Channel(si.ID)
		if err == nil {
			ch3.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the channel of a consumer that hung up: %v", err)
		}
	}
	if _, err := a.Channel(999); !errors.Is(err, ErrNotFound) {
		t.Errorf("channel of no session: %v", err)
	}
	if _, err := a.call(&Request{Op: OpRelease, Session: si.ID}); !errors.Is(err, ErrNotFound) {
		t.Errorf("release of a channel not held: %v", err)
	}
}

// readAll reads what a channel holds.
func readAll(ch *Channel) (int, error) {
	total := 0
	for {
		n := 0
		for i := range ch.Shards() {
			k, err := ch.Read(i, 0, func(*tracepoint.Event) {})
			if err != nil {
				return total, err
			}
			n += k
		}
		total += n
		if n == 0 && !ch.Pending() {
			return total, nil
		}
	}
}

// TestEnableSessions: a session's rings are reported as they are (a
// request of 100 bytes gets whole rings); a failed enable uses up no
// session id; the limits on attachments and on all rings' memory refuse
// with the option that raises them.
func TestEnableSessions(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, &Options{MaxAttachments: 2, MaxRingMemory: 3 << 20, MaxBufferSize: 2 << 20})
	c := dial(t, s.Path())
	small, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if want := tracepoint.BufferSizeFor(100); small.BufferSize != want || small.BufferSize < 4096 || small.Mode != "discard" {
		t.Errorf("a 100-byte session: %d bytes of rings (%s), want %d", small.BufferSize, small.Mode, want)
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: "nope =="}); err == nil {
		t.Fatal("a broken filter was enabled")
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Mode: "sometimes"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("an unknown mode: %v", err)
	}
	next, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Mode: "block", BlockTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if next.ID != small.ID+2 { // +1 for small's attachment
		t.Errorf("session %d after %d: the failed enables used up ids", next.ID, small.ID)
	}
	if next.Mode != "block" {
		t.Errorf("mode %q", next.Mode)
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Session: next.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), Session: next.ID})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "control.Options.MaxAttachments") {
		t.Errorf("a third attachment of a session: %v", err)
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Session: next.ID, Mode: "overwrite"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("a mode for an existing session: %v", err)
	}
	_, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 2 << 20})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "control.Options.MaxRingMemory") {
		t.Errorf("rings past MaxRingMemory: %v", err)
	}
	if _, err := c.Disable(small.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 1 << 20}); err != nil {
		t.Errorf("a session after another was disabled: %v", err)
	}
}

// TestRecordAfterExitOfSession: a recording of a session that is
// disabled while it runs writes what the session held, and ends.
func TestRecordAfterExitOfSession(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, nil)
	c := dial(t, s.Path())
	si, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		ev := event(uint64(i), 200, "GET", 1)
		tp.Fire(&ev)
	}
	other := dial(t, s.Path())
	if _, err := other.Disable(si.ID); err != nil {
		t.Fatal(err)
	}
	st, err := c.Record(context.Background(), si.ID, filepath.Join(t.TempDir(), "trace"))
	if !errors.Is(err, ErrNotFound) {
		// The channel of a disabled session cannot be had any more: a
		// recorder that held it keeps reading it.
		t.Errorf("record of a disabled session: %+v %v", st, err)
	}
	si, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Channel(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		ev := event(uint64(i), 200, "GET", 1)
		tp.Fire(&ev)
	}
	if _, err := other.Disable(si.ID); err != nil {
		t.Fatal(err)
	}
	rs, err := ctf.RecordChannel(context.Background(), ch, filepath.Join(t.TempDir(), "trace2"))
	if err != nil || rs.Events != 20000 {
		t.Errorf("a channel whose session closed: %+v %v, want its 20000 events", rs, err)
	}
}
