package maps

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func newRing(t testing.TB, pages uint32) (RingBufMap, *Reader) {
	t.Helper()
	m := mustNew(t, &Spec{Name: "rb", Type: RingBuf, MaxEntries: pages * uint32(hostPageSize)})
	rd, err := NewReader(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return m.(RingBufMap), rd
}

func TestRingBufLayoutAndQuery(t *testing.T) {
	rb, rd := newRing(t, 1)
	r := rb.(*ringBuf)
	size := uint64(hostPageSize)
	if rb.Query(RBRingSize) != size || rd.BufferSize() != int(size) {
		t.Error("ring size")
	}
	if err := rb.Output([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	// Header: length 5, no flags; pg_off = data page (3); record padded to 16.
	if l := *(*uint32)(r.data); l != 5 {
		t.Errorf("header len %#x", l)
	}
	if pg := *(*uint32)(unsafe.Add(r.data, 4)); pg != ringBufKernelPgOff {
		t.Errorf("header pg_off %d", pg)
	}
	if got := rb.Query(RBProdPos); got != 16 {
		t.Errorf("producer position %d, want 16", got)
	}
	if rb.Query(RBAvailData) != 16 || rb.Query(RBConsPos) != 0 || rb.Query(99) != 0 {
		t.Error("Query")
	}
	p := rb.Reserve(3)
	if p == nil || uintptr(p)%8 != 0 {
		t.Fatal("Reserve")
	}
	if l := *(*uint32)(unsafe.Add(r.data, 16)); l != 3|RingBufBusyBit {
		t.Errorf("reserved header %#x, want BUSY|3", l)
	}
	rb.Discard(p, 0)
	if l := *(*uint32)(unsafe.Add(r.data, 16)); l != 3|RingBufDiscardBit {
		t.Errorf("discarded header %#x, want DISCARD|3", l)
	}
	rec, err := rd.Read()
	if err != nil || string(rec.RawSample) != "hello" {
		t.Fatalf("Read: %q %v", rec.RawSample, err)
	}
	if rec.Remaining != 16 {
		t.Errorf("Remaining %d, want 16 (the discarded record)", rec.Remaining)
	}
	rd.SetDeadline(time.Now().Add(-time.Second))
	if _, err := rd.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("discarded record was returned: %v", err)
	}
	if rb.Query(RBConsPos) != 32 || rb.Query(RBAvailData) != 0 || rd.AvailableBytes() != 0 {
		t.Error("consumer did not skip the discarded record")
	}
	if err := rb.Output(nil, 4); !errors.Is(err, ErrInvalid) {
		t.Errorf("Output with bad flags: %v", err)
	}
	if RingBufOf(p) != rb || RingBufOf(unsafe.Pointer(&size)) != nil {
		t.Error("RingBufOf")
	}
	var k uint32
	if rb.LookupElem(unsafe.Pointer(&k), 0) != nil {
		t.Error("LookupElem")
	}
	if err := rb.UpdateElem(nil, nil, 0, 0); !errors.Is(err, ErrNotSupported) {
		t.Errorf("UpdateElem: %v", err)
	}
	if err := rb.Lookup(uint32(0), &k); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Lookup: %v", err)
	}
}

func TestRingBufWraparound(t *testing.T) {
	rb, rd := newRing(t, 1)
	size := hostPageSize
	rd.SetDeadline(time.Now().Add(10 * time.Second))
	// Sizes that are not multiples of 8 and do not divide the ring, so
	// records land across the end at varied offsets.
	for i := range 200 {
		n := 100 + (i*37)%900
		data := bytes.Repeat([]byte{byte(i)}, n)
		data[0], data[n-1] = 0xAA, 0x55
		if i%2 == 0 {
			if err := rb.Output(data, 0); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		} else {
			p := rb.Reserve(uint64(n))
			if p == nil {
				t.Fatalf("record %d: reserve failed", i)
			}
			copy(unsafe.Slice((*byte)(p), n), data)
			rb.Submit(p, 0)
		}
		rec, err := rd.Read()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(rec.RawSample, data) {
			t.Fatalf("record %d (%d bytes) corrupted", i, n)
		}
	}
	if pos := rb.Query(RBProdPos); pos < 10*uint64(size) {
		t.Errorf("only %d bytes produced; no wraparound", pos)
	}
	if rb.Dropped() != 0 {
		t.Errorf("%d drops", rb.Dropped())
	}
	// A record that wraps is also readable from the start of the ring, as
	// with the kernel's double mapping.
	r := rb.(*ringBuf)
	prod := rb.Query(RBProdPos)
	off := prod & r.mask
	// Pad so the next record starts 16 bytes before the end.
	if gap := uint64(size) - off; gap >= 24 {
		_ = rb.Output(make([]byte, gap-16-8), 0)
		_, _ = rd.Read()
	} else {
		_ = rb.Output(make([]byte, gap+uint64(size)-16-8), 0)
		_, _ = rd.Read()
	}
	if got := rb.Query(RBProdPos) & r.mask; got != uint64(size)-16 {
		t.Fatalf("setup: producer at %d", got)
	}
	payload := []byte("0123456789abcdefghijklmnop")
	if err := rb.Output(payload, 0); err != nil {
		t.Fatal(err)
	}
	// 8 bytes of data fit before the end; the rest is at the start.
	if got := unsafe.Slice((*byte)(r.data), 18); !bytes.Equal(got, payload[8:]) {
		t.Errorf("wrapped part at ring start = %q", got)
	}
	rec, err := rd.Read()
	if err != nil || !bytes.Equal(rec.RawSample, payload) {
		t.Errorf("wrapped record %q %v", rec.RawSample, err)
	}
}

func TestRingBufFullAndDrops(t *testing.T) {
	rb, rd := newRing(t, 1)
	size := hostPageSize
	// The ring holds at most size-8 bytes of records (the kernel never lets
	// the producer get a whole ring ahead).
	big := make([]byte, size-16)
	if err := rb.Output(big, 0); err != nil {
		t.Fatalf("record of size-16 bytes: %v", err)
	}
	if p := rb.Reserve(0); p != nil {
		t.Error("reserve in a full ring succeeded")
	}
	err := rb.Output([]byte{1}, 0)
	if !errors.Is(err, ErrRingBufFull) || !errors.Is(err, unix.EAGAIN) || Errno(err) != -int64(unix.EAGAIN) {
		t.Errorf("Output to full ring: %v", err)
	}
	if rb.Reserve(uint64(size)) != nil || rb.Reserve(1<<31) != nil {
		t.Error("oversized reserve succeeded")
	}
	if got := rb.Dropped(); got != 4 || rd.Dropped() != 4 {
		t.Errorf("Dropped = %d, want 4", got)
	}
	if _, err := rd.Read(); err != nil {
		t.Fatal(err)
	}
	if err := rb.Output(big, 0); err != nil {
		t.Errorf("Output after the ring drained: %v", err)
	}
}

func TestRingBufBusyRecordBlocksLaterOnes(t *testing.T) {
	rb, rd := newRing(t, 1)
	p1 := rb.Reserve(8)
	if err := rb.Output([]byte("second"), 0); err != nil {
		t.Fatal(err)
	}
	rd.SetDeadline(time.Now().Add(-time.Second))
	if _, err := rd.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past a busy record: %v", err)
	}
	copy(unsafe.Slice((*byte)(p1), 8), "first...")
	rb.Submit(p1, 0)
	recs := make([]Record, 4)
	n, err := rd.ReadBatch(recs)
	if err != nil || n != 2 || string(recs[0].RawSample) != "first..." || string(recs[1].RawSample) != "second" {
		t.Fatalf("ReadBatch: %d %v", n, err)
	}
	// Submitting an unknown pointer is ignored.
	rb.Submit(p1, 0)
	rb.Submit(unsafe.Pointer(&n), 0)
}

func TestRingBufWakeup(t *testing.T) {
	tests := []struct {
		name      string
		preload   bool // a committed record already waits, so the new one is not first
		flags     uint64
		wantAwake bool
	}{
		{"default", false, 0, true},
		{"no wakeup", false, RBNoWakeup, false},
		{"force wakeup", false, RBForceWakeup, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb, rd := newRing(t, 1)
			done := make(chan error, 1)
			rd.SetDeadline(time.Now().Add(300 * time.Millisecond))
			go func() {
				_, err := rd.Read()
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // let the reader block
			if err := rb.Output([]byte("x"), tt.flags); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !tt.wantAwake {
					t.Errorf("reader woke up: %v", err)
				} else if err != nil {
					t.Error(err)
				}
			case <-time.After(200 * time.Millisecond):
				if tt.wantAwake {
					t.Error("reader was not woken")
				}
				if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("reader: %v", err)
				}
			}
		})
	}
}

func TestRingBufDeadlineAndClose(t *testing.T) {
	rb, rd := newRing(t, 1)
	rd.SetDeadline(time.Now().Add(30 * time.Millisecond))
	start := time.Now()
	if _, err := rd.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read with deadline: %v", err)
	}
	if d := time.Since(start); d < 25*time.Millisecond {
		t.Errorf("deadline returned after %v", d)
	}
	// A later deadline change unblocks a waiting reader's timer.
	rd.SetDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := rd.Read()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	rd.SetDeadline(time.Now())
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("after SetDeadline(now): %v", err)
	}
	// Close unblocks.
	rd.SetDeadline(time.Time{})
	go func() {
		_, err := rd.Read()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	rd.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	// Closing the ring itself unblocks its readers too.
	rd2, _ := NewReader(rb)
	go func() {
		_, err := rd2.Read()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	rb.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Read after ring Close: %v", err)
	}
	if _, err := NewReader(mustNew(t, &Spec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1})); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewReader(hash): %v", err)
	}
}

func TestRingBufConcurrentProducers(t *testing.T) {
	rb, rd := newRing(t, 4)
	const producers, per = 4, 2000
	for p := range producers {
		go func() {
			buf := make([]byte, 16)
			for i := 0; i < per; {
				nativeEndian.PutUint64(buf, uint64(p))
				nativeEndian.PutUint64(buf[8:], uint64(i))
				if rb.Output(buf, 0) == nil {
					i++
				} else {
					time.Sleep(time.Microsecond)
				}
			}
		}()
	}
	next := make([]uint64, producers)
	rd.SetDeadline(time.Now().Add(20 * time.Second))
	recs := make([]Record, 32)
	for got := 0; got < producers*per; {
		n, err := rd.ReadBatch(recs)
		if err != nil {
			t.Fatalf("after %d records: %v", got, err)
		}
		for _, r := range recs[:n] {
			p, i := nativeEndian.Uint64(r.RawSample), nativeEndian.Uint64(r.RawSample[8:])
			if i != next[p] {
				t.Fatalf("producer %d: record %d, want %d", p, i, next[p])
			}
			next[p]++
		}
		got += n
	}
}

func TestRingBufRegistryForgetsCollectedRings(t *testing.T) {
	count := func() int {
		if cur := rings.Load(); cur != nil {
			return len(*cur)
		}
		return 0
	}
	before := count()
	func() {
		for range 4 {
			_ = mustNew(t, &Spec{Name: "tmp", Type: RingBuf, MaxEntries: uint32(hostPageSize)})
		}
	}()
	for i := 0; i < 100 && count() > before; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if count() > before {
		t.Errorf("registry holds %d rings, want at most %d", count(), before)
	}
}

// Write gathers its parts into one record: copied parts in order, zero
// parts as zeros over whatever the ring held before, across the end of
// the ring too.
func TestRingBufWriteGathers(t *testing.T) {
	rb, rd := newRing(t, 1)
	rd.SetDeadline(time.Now().Add(10 * time.Second))
	head, tail := []byte("head...."), []byte("tail")
	for i := range 100 {
		// Dirty the ring where the zeros will go.
		if err := rb.Output(bytes.Repeat([]byte{0xff}, 1+i*13%300), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := rd.Read(); err != nil {
			t.Fatal(err)
		}
		zeros := uintptr(i * 7 % 50)
		var parts RecordParts
		parts[0].Src, parts[0].Len = unsafe.Pointer(&head[0]), uintptr(len(head))
		parts[1].Len = zeros
		parts[3].Src, parts[3].Len = unsafe.Pointer(&tail[0]), uintptr(len(tail))
		if err := rb.Write(parts, 0); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		rec, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		want := append(append(append([]byte{}, head...), make([]byte, zeros)...), tail...)
		if !bytes.Equal(rec.RawSample, want) {
			t.Fatalf("write %d: record %x, want %x", i, rec.RawSample, want)
		}
	}
	var huge RecordParts
	huge[0].Len = uintptr(hostPageSize)
	if err := rb.Write(huge, 0); !errors.Is(err, ErrRingBufFull) {
		t.Errorf("a record larger than the ring: %v", err)
	}
	if err := rb.Write(RecordParts{}, 1<<5); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown flags: %v", err)
	}
}

// TestRingBufWriteCounted checks that WriteCounted counts the records it
// writes, from several goroutines, and not the ones it drops.
func TestRingBufWriteCounted(t *testing.T) {
	rb, _ := newRing(t, 1)
	var count uint64
	data := make([]byte, 24)
	var parts RecordParts
	parts[0].Src, parts[0].Len = unsafe.Pointer(&data[0]), uintptr(len(data))
	const goroutines = 4
	var written, dropped [goroutines]uint64
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 1000 {
				if err := rb.WriteCounted(parts, RBNoWakeup, &count); err == nil {
					written[g]++
				} else if errors.Is(err, ErrRingBufFull) {
					dropped[g]++
				} else {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range goroutines {
		<-done
	}
	var w, d uint64
	for g := range goroutines {
		w += written[g]
		d += dropped[g]
	}
	if got := atomic.LoadUint64(&count); got != w || w == 0 || d == 0 || w+d != goroutines*1000 {
		t.Errorf("count %d, written %d, dropped %d", got, w, d)
	}
	if got := rb.Dropped(); got != d {
		t.Errorf("Dropped() = %d, want %d", got, d)
	}
}

// TestRingBufNoLostWakeup has a reader block for every record a producer
// writes one at a time, each waiting for the reader to catch up: a
// wakeup lost between the producer's publication and the reader going
// to sleep leaves the reader asleep until its deadline. Producers release
// the ring's lock and publish with plain stores on amd64 (no fence), so
// the reader's last check before sleeping is made under that lock.
func TestRingBufNoLostWakeup(t *testing.T) {
	rb, rd := newRing(t, 1)
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var consumed atomic.Uint64
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			rd.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := rd.Read(); err != nil {
				errc <- fmt.Errorf("record %d: %w", i, err)
				return
			}
			consumed.Add(1)
		}
		errc <- nil
	}()
	var parts RecordParts
	b := []byte("12345678")
	parts[0].Src, parts[0].Len = unsafe.Pointer(&b[0]), uintptr(len(b))
	for i := range n {
		// Wait for the reader to take the previous record, so that it
		// is about to block on this one.
		for consumed.Load() < uint64(i) {
			select {
			case err := <-errc:
				t.Fatal(err)
			default:
			}
			runtime.Gosched()
		}
		var err error
		if i%2 == 0 {
			err = rb.Write(parts, 0)
		} else {
			p := rb.Reserve(8)
			if p == nil {
				t.Fatal("Reserve failed")
			}
			err = rb.Submit(p, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
