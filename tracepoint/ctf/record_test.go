//go:build linux

package ctf_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

type chunkEv struct {
	Seq  uint64
	Name [16]byte
}

var chunkTP = tracepoint.New[chunkEv]("ctftest_record", "chunk")

// fireAll fires n events of chunkTP from several goroutines, so that they
// land in several rings (streams).
// chunkSession is a session of bufferSize bytes of rings with chunkTP
// enabled, closed when the test ends.
func chunkSession(t *testing.T, bufferSize int) *tracepoint.Session {
	t.Helper()
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: bufferSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Enable(chunkTP); err != nil {
		t.Fatal(err)
	}
	return s
}

func fireAll(n int) {
	var wg sync.WaitGroup
	per := n / 4
	for g := range 4 {
		wg.Go(func() {
			for i := range per {
				ev := chunkEv{Seq: uint64(g*per + i)}
				copy(ev.Name[:], "ev")
				chunkTP.Fire(&ev)
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
}

// TestRecordStreamsAndContexts records events from several rings, of one
// tracepoint with two sets of context fields (a second session's
// attachment asks for the thread id halfway): babeltrace2 reads every
// event, each with the context its record carried.
func TestRecordStreamsAndContexts(t *testing.T) {
	s := chunkSession(t, 4<<20)
	fireAll(2000)
	other, err := tracepoint.NewSession(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Enable(chunkTP, tracepoint.WithThreadID()); err != nil {
		t.Fatal(err)
	}
	fireAll(2000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "trace")
	st, err := ctf.Record(ctx, s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 4000 || st.Dropped != 0 || st.Chunks != 1 {
		t.Errorf("stats %+v", st)
	}
	lines, stderr := babeltrace(t, dir)
	if len(lines) != 4000 || stderr != "" {
		t.Fatalf("babeltrace2 read %d events, want 4000; it says %q", len(lines), stderr)
	}
	withTid := 0
	for _, l := range lines {
		if strings.Contains(l, "{ vtid = ") {
			withTid++
		}
	}
	if withTid != 2000 {
		t.Errorf("%d events with a vtid, want 2000", withTid)
	}
	streams, _ := filepath.Glob(filepath.Join(dir, "stream_*"))
	if runtime.GOMAXPROCS(0) > 1 && len(streams) < 2 {
		t.Logf("events of 4 goroutines in %d stream(s) only", len(streams))
	}
}

// TestRecordRotate: a rotating recording is a sequence of complete traces
// that hold every event between them.
func TestRecordRotate(t *testing.T) {
	s := chunkSession(t, 8<<20)
	dir := filepath.Join(t.TempDir(), "trace")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var st ctf.RecordStats
	go func() {
		var err error
		st, err = ctf.Record(ctx, s, dir, ctf.PacketSize(ctf.MinPacketSize), ctf.Rotate(64<<10, 0))
		done <- err
	}()
	const n = 40000
	for range 10 {
		fireAll(n / 10)
	}
	s.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	chunks, _ := filepath.Glob(filepath.Join(dir, "chunk-*"))
	if len(chunks) < 3 || st.Chunks != len(chunks) {
		t.Fatalf("%d chunks (stats say %d) for %d events of 40 bytes in 64 KiB chunks", len(chunks), st.Chunks, n)
	}
	total := 0
	for _, c := range chunks {
		lines, stderr := babeltrace(t, c)
		if stderr != "" {
			t.Errorf("chunk %s: babeltrace2 says %q", c, stderr)
		}
		total += len(lines)
	}
	if total != n || st.Events != n {
		t.Errorf("chunks hold %d events, stats %d, want %d", total, st.Events, n)
	}
}

// TestRecordGone: a recording whose producer is gone reads everything the
// channel holds, however much.
func TestRecordGone(t *testing.T) {
	s := chunkSession(t, 16<<20)
	fireAll(200000)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ctf.ErrGone)
	dir := filepath.Join(t.TempDir(), "trace")
	st, err := ctf.Record(ctx, s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 200000 {
		t.Errorf("wrote %d of 200000 events", st.Events)
	}
	if _, err := os.Stat(filepath.Join(dir, ctf.MetadataFile)); err != nil {
		t.Error(err)
	}
}

// BenchmarkRecordChannel is the consumer's side of a recording: what Record
// costs per event, reading a session's rings and writing the trace (its
// page cache), with the rings filled beforehand.
func BenchmarkRecordChannel(b *testing.B) {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enable(chunkTP); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ResetTimer()
	var total uint64
	for i := 0; i < b.N; i += 500000 {
		b.StopTimer()
		fireAll(500000)
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ctf.ErrGone)
		b.StartTimer()
		st, err := ctf.Record(ctx, s, filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			b.Fatal(err)
		}
		total += st.Events
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
}
