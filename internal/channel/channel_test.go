package channel

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

func newChannel(t testing.TB, o Options) *Channel {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// write writes a record whose body is n bytes: the writer, a sequence
// number, then bytes derived from both, so that a reader can check it.
func write(c *Channel, writer, seq uint32, n int) bool {
	cl, dst := c.Begin(n)
	if dst == nil {
		c.Release(cl)
		return false
	}
	fill(unsafe.Slice((*byte)(dst), n), writer, seq)
	c.Commit(cl, writer)
	return true
}

func fill(b []byte, writer, seq uint32) {
	binary.LittleEndian.PutUint32(b, writer)
	binary.LittleEndian.PutUint32(b[4:], seq)
	for i := 8; i < len(b); i++ {
		b[i] = byte(int(writer) + int(seq) + i)
	}
}

// check checks a record write wrote and returns its writer and sequence.
func check(t testing.TB, tag uint32, body []byte) (writer, seq uint32) {
	t.Helper()
	if len(body) < 8 {
		t.Fatalf("body of %d bytes", len(body))
	}
	writer, seq = binary.LittleEndian.Uint32(body), binary.LittleEndian.Uint32(body[4:])
	want := make([]byte, len(body))
	fill(want, writer, seq)
	if tag != writer || string(want) != string(body) {
		t.Fatalf("record of writer %d seq %d tag %d is not what was written:\n% x", writer, seq, tag, body)
	}
	return writer, seq
}

// drain reads every record the reader has, checking them.
func drain(t testing.TB, r *Reader, fn func(shard int, writer, seq uint32)) int {
	t.Helper()
	total := 0
	for {
		n := 0
		for i := 0; i < r.Shards(); i++ {
			k, err := r.Read(i, 0, func(tag uint32, body []byte) {
				w, s := check(t, tag, body)
				if fn != nil {
					fn(i, w, s)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
		total += n
		if n == 0 {
			return total
		}
	}
}

// oneP runs the test on one P, so that every write goes to ring 0.
func oneP(t testing.TB) {
	old := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(shard{}); s != 128 {
		t.Errorf("shard is %d bytes, want 128 (a line of its own)", s)
	}
	c := newChannel(t, Options{Shards: 3, ShardSize: 5000, Procname: "layouttest", PID: 77, ClockOffset: -5, Created: 9})
	if c.Shards() != 4 || c.ShardSize() != 8192 || c.BufferSize() != 3*8192+8192 {
		t.Errorf("shards %d of %d bytes, %d in all", c.Shards(), c.ShardSize(), c.BufferSize())
	}
	r := c.Reader()
	h := r.Header()
	if h.Shards != 4 || h.ShardSize != 8192 || h.PID != 77 || h.Procname != "layouttest" || h.ClockOffset != -5 || h.Created != 9 || h.Mode != Discard {
		t.Errorf("header %+v", h)
	}
	if r.Closed() {
		t.Error("closed before Close")
	}
	c.Close()
	if !r.Closed() {
		t.Error("not closed after Close")
	}
	if _, err := New(Options{ShardSize: MaxShardSize + 1}); err == nil {
		t.Error("a shard over MaxShardSize was made")
	}
	if _, err := New(Options{Mode: Block + 1}); err == nil {
		t.Error("an unknown mode was taken")
	}
}

func TestWriteRead(t *testing.T) {
	for _, mode := range []Mode{Discard, Block, Overwrite} {
		t.Run(mode.String(), func(t *testing.T) {
			c := newChannel(t, Options{Shards: 2, ShardSize: 4096, Mode: mode})
			r := c.Reader()
			// Sizes that leave every remainder at a ring's end, so that
			// pad records are written and skipped.
			seq := uint32(0)
			for round := 0; round < 50; round++ {
				for _, n := range []int{8, 13, 48, 100, 333, 1000} {
					if !write(c, 1, seq, n) {
						t.Fatalf("record %d of %d bytes dropped in an empty ring", seq, n)
					}
					seq++
				}
				next := uint32(round * 6)
				got := drain(t, r, func(_ int, _, s uint32) {
					if s != next {
						t.Fatalf("record %d, want %d", s, next)
					}
					next++
				})
				if got != 6 {
					t.Fatalf("round %d: %d records, want 6", round, got)
				}
			}
			if st := c.Stats(); st.Records != uint64(seq) || st.Dropped != 0 {
				t.Errorf("stats %+v, want %d records", st, seq)
			}
		})
	}
}

func TestDiscardFull(t *testing.T) {
	c := newChannel(t, Options{Shards: 1, ShardSize: 4096})
	r := c.Reader()
	oneP(t)
	written := 0
	for i := 0; i < 200; i++ {
		if write(c, 1, uint32(i), 56) {
			written++
		}
	}
	if written == 200 || written == 0 {
		t.Fatalf("%d of 200 records of 64 bytes fit a 4 KiB ring", written)
	}
	if st := c.Stats(); st.Dropped != uint64(200-written) {
		t.Errorf("dropped %d, want %d", st.Dropped, 200-written)
	}
	if got := drain(t, r, nil); got != written {
		t.Errorf("read %d of %d", got, written)
	}
	if !write(c, 1, 999, 56) {
		t.Error("no room after the reader consumed everything")
	}
}

func TestConcurrentWriters(t *testing.T) {
	const writers, each = 8, 20000
	for _, mode := range []Mode{Block, Discard} {
		t.Run(mode.String(), func(t *testing.T) {
			c := newChannel(t, Options{ShardSize: 16 << 10, Mode: mode, BlockTimeout: -1})
			r := c.Reader()
			var wg sync.WaitGroup
			var written atomic.Int64
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						if write(c, uint32(w), uint32(i), 8+(i%7)*8) {
							written.Add(1)
						}
						if i%1000 == 0 {
							runtime.Gosched()
						}
					}
				})
			}
			last := make([]int64, writers)
			for i := range last {
				last[i] = -1
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			read := 0
			for finished := false; ; {
				n := drain(t, r, func(_ int, w, s uint32) {
					// Each writer's records come in order within a ring, and
					// a writer moves between rings only between records:
					// order per writer holds across rings only loosely, so
					// only count and check content here.
					last[w] = int64(s)
				})
				read += n
				if finished && n == 0 {
					break
				}
				select {
				case <-done:
					finished = true
				default:
					r.Wait(time.Millisecond)
				}
			}
			st := c.Stats()
			if int64(read) != written.Load() || st.Records != uint64(read) {
				t.Errorf("read %d, written %d, stats %+v", read, written.Load(), st)
			}
			if mode == Block && read != writers*each {
				t.Errorf("block mode lost records: read %d of %d (stats %+v)", read, writers*each, st)
			}
			if st.Records+st.Dropped != writers*each {
				t.Errorf("records %d + dropped %d != %d", st.Records, st.Dropped, writers*each)
			}
		})
	}
}

func TestBlockTimeout(t *testing.T) {
	c := newChannel(t, Options{Shards: 1, ShardSize: 4096, Mode: Block, BlockTimeout: 20 * time.Millisecond})
	oneP(t)
	n := 0
	for write(c, 1, uint32(n), 120) {
		n++
	}
	if st := c.Stats(); st.Dropped != 1 || st.Records != uint64(n) {
		t.Errorf("stats %+v after %d records", st, n)
	}
	// A reader that consumes meanwhile lets a blocked writer go on.
	r := c.Reader()
	go func() {
		time.Sleep(5 * time.Millisecond)
		r.Read(0, 1, func(uint32, []byte) {})
	}()
	c.block = 5 * time.Second
	if !write(c, 1, 1000, 120) {
		t.Error("a blocked writer was not let through by the reader")
	}
}

func TestOverwrite(t *testing.T) {
	c := newChannel(t, Options{Shards: 1, ShardSize: 4096, Mode: Overwrite})
	oneP(t)
	const total = 1000
	for i := range total {
		if !write(c, 1, uint32(i), 40+(i%3)*8) {
			t.Fatalf("overwrite mode dropped record %d", i)
		}
	}
	r := c.Reader()
	var seqs []uint32
	drain(t, r, func(_ int, _, s uint32) { seqs = append(seqs, s) })
	if len(seqs) < 40 || seqs[len(seqs)-1] != total-1 {
		t.Fatalf("read %d records, last %v: want the newest", len(seqs), seqs[len(seqs)-1:])
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("gap between %d and %d", seqs[i-1], seqs[i])
		}
	}
	st := c.Stats()
	if st.Overwritten+uint64(len(seqs)) != total || st.Records != total {
		t.Errorf("stats %+v, read %d", st, len(seqs))
	}
	if r.ReaderStats().Lost == 0 {
		t.Error("no bytes counted lost to overwriting")
	}
}

// TestOverwriteConcurrentReader reads an overwrite-mode ring while it is
// overwritten: every record handed out must be intact (check fails
// otherwise), none repeated, in order.
func TestOverwriteConcurrentReader(t *testing.T) {
	c := newChannel(t, Options{Shards: 1, ShardSize: 4096, Mode: Overwrite})
	r := c.Reader()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		for i := range 300000 {
			write(c, 1, uint32(i), 24+(i%11)*8)
		}
	}()
	last := make([]int64, c.Shards())
	for i := range last {
		last[i] = -1
	}
	n := 0
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		default:
		}
		n += drain(t, r, func(shard int, _, s uint32) {
			if int64(s) <= last[shard] {
				t.Fatalf("shard %d: record %d after %d", shard, s, last[shard])
			}
			last[shard] = int64(s)
		})
	}
	if n == 0 {
		t.Fatal("nothing read")
	}
	t.Logf("read %d of 300000 while overwritten; lost %d bytes", n, r.ReaderStats().Lost)
}

// TestHostileConsumerPositions: a consumer position that is not 8-aligned,
// moves back or passes the head never makes the producer overwrite what
// was not consumed.
func TestHostileConsumerPositions(t *testing.T) {
	for _, bad := range []uint64{3, 1 << 62, ^uint64(0) &^ 7, 4096 * 3} {
		c := newChannel(t, Options{Shards: 1, ShardSize: 4096})
		oneP(t)
		n := 0
		for write(c, 1, uint32(n), 56) {
			n++
		}
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&c.mem.pos[0])), bad)
		if write(c, 1, 9999, 56) {
			t.Errorf("consumer position %#x let a record overwrite unconsumed ones", bad)
		}
		// A trusted reader from the start still reads all n intact.
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&c.mem.pos[0])), 0)
		r := c.Reader()
		if got := drain(t, r, nil); got != n {
			t.Errorf("consumer position %#x: %d of %d records survive", bad, got, n)
		}
	}
}

func TestMeta(t *testing.T) {
	c := newChannel(t, Options{MetaSize: 4096})
	r := c.Reader()
	if _, err := c.AppendMeta([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if off, err := c.AppendMeta([]byte("two")); err != nil || off != 3 {
		t.Fatal(off, err)
	}
	if b, err := r.Meta(0); err != nil || string(b) != "onetwo" {
		t.Errorf("meta %q, %v", b, err)
	}
	if b, err := r.Meta(3); err != nil || string(b) != "two" {
		t.Errorf("meta from 3: %q, %v", b, err)
	}
	if _, err := r.Meta(7); err == nil {
		t.Error("meta past its length read")
	}
	if _, err := c.AppendMeta(make([]byte, 64<<10)); !errors.Is(err, ErrMetaFull) {
		t.Errorf("overfull meta: %v", err)
	}
}

func TestFilesAndMap(t *testing.T) {
	if !Shared {
		t.Skip("channels are not shared on this platform")
	}
	c := newChannel(t, Options{Shards: 2, ShardSize: 8192})
	for i := range 10 {
		write(c, 3, uint32(i), 32)
	}
	d, p, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Map(d, p)
	d.Close()
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := drain(t, r, nil); got != 10 {
		t.Errorf("read %d of 10 through the files", got)
	}
	// The data mapping is read-only: a consumer cannot write the
	// producer's side.
	if _, err := mapWritableData(d); err == nil {
		t.Error("the data file handed out could be mapped writable")
	}
	// Consumed: the producer's own reader starts where Map's stopped.
	if got := drain(t, c.Reader(), nil); got != 0 {
		t.Errorf("%d records read again after a consumer took them", got)
	}
}

// TestTruncatedFile: a file-backed channel whose file shrinks under a
// reader's mapping makes reads fail, not fault the process.
func TestTruncatedFile(t *testing.T) {
	if !Shared {
		t.Skip("channels are not shared on this platform")
	}
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "ring"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	c := newChannel(t, Options{Shards: 1, ShardSize: 64 << 10, File: f})
	oneP(t)
	for i := range 100 {
		write(c, 1, uint32(i), 256)
	}
	d, p, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Map(d, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Truncate(f.Name(), 4096); err != nil {
		t.Fatal(err)
	}
	_, err = r.Read(0, 0, func(uint32, []byte) {})
	if !errors.Is(err, errFault) {
		t.Errorf("read of a truncated mapping: %v, want a fault error", err)
	}
	if _, err := r.Read(0, 0, func(uint32, []byte) {}); err == nil {
		t.Error("read after a fault succeeded")
	}
}

// TestParseCrashCopy: a copy of a data file (what a file-backed session
// leaves after a crash) reads back every record from tail to head.
func TestParseCrashCopy(t *testing.T) {
	for _, mode := range []Mode{Discard, Overwrite} {
		c := newChannel(t, Options{Shards: 2, ShardSize: 4096, Mode: mode})
		oneP(t)
		n := 0
		for i := range 300 {
			if write(c, 2, uint32(i), 40) {
				n++
			}
		}
		r, err := Parse(append([]byte(nil), c.mem.data...))
		if err != nil {
			t.Fatal(err)
		}
		got := drain(t, r, nil)
		if mode == Discard && got != n || mode == Overwrite && (got == 0 || got >= 300) {
			t.Errorf("%v: recovered %d of %d", mode, got, n)
		}
	}
}
