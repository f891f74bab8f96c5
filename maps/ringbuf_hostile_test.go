package maps

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// Ring buffer records against pointers and headers nobody reserved (issue
// 16): commits accept only what Reserve handed out, once, and the reader
// never copies more than was produced.

func TestRingBufCommitRejects(t *testing.T) {
	var stack [64]byte
	tests := []struct {
		name string
		// ptr returns the pointer to commit, given a reserved record p
		// of 64 bytes of rb and a record q of 8 bytes of another ring.
		ptr func(rb *ringBuf, p, q unsafe.Pointer) unsafe.Pointer
		// first commits p before committing ptr.
		first func(rb *ringBuf, p unsafe.Pointer) error
	}{
		{"nil", func(_ *ringBuf, _, _ unsafe.Pointer) unsafe.Pointer { return nil }, nil},
		{"stack", func(_ *ringBuf, _, _ unsafe.Pointer) unsafe.Pointer { return unsafe.Pointer(&stack[8]) }, nil},
		{"record+8", func(_ *ringBuf, p, _ unsafe.Pointer) unsafe.Pointer { return unsafe.Add(p, 8) }, nil},
		{"record+1", func(_ *ringBuf, p, _ unsafe.Pointer) unsafe.Pointer { return unsafe.Add(p, 1) }, nil},
		{"record-8", func(_ *ringBuf, p, _ unsafe.Pointer) unsafe.Pointer { return unsafe.Add(p, -8) }, nil},
		{"ring start", func(rb *ringBuf, _, _ unsafe.Pointer) unsafe.Pointer { return rb.data }, nil},
		{"ring end", func(rb *ringBuf, _, _ unsafe.Pointer) unsafe.Pointer { return unsafe.Add(rb.data, rb.size-8) }, nil},
		{"other ring's record", func(_ *ringBuf, _, q unsafe.Pointer) unsafe.Pointer { return q }, nil},
		{"double submit", func(_ *ringBuf, p, _ unsafe.Pointer) unsafe.Pointer { return p },
			func(rb *ringBuf, p unsafe.Pointer) error { return rb.Submit(p, 0) }},
		{"discard then submit", func(_ *ringBuf, p, _ unsafe.Pointer) unsafe.Pointer { return p },
			func(rb *ringBuf, p unsafe.Pointer) error { return rb.Discard(p, 0) }},
	}
	for _, tc := range tests {
		for _, discard := range []bool{false, true} {
			name := tc.name + "/submit"
			if discard {
				name = tc.name + "/discard"
			}
			t.Run(name, func(t *testing.T) {
				m, rd := newRing(t, 1)
				rb := m.(*ringBuf)
				other, _ := newRing(t, 1)
				p := rb.Reserve(64)
				q := other.Reserve(8)
				if p == nil || q == nil {
					t.Fatal("reserve failed")
				}
				copy(bytesAt(p, 64), "record")
				committed := tc.first != nil
				if committed {
					if err := tc.first(rb, p); err != nil {
						t.Fatal(err)
					}
				}
				before := *rb.hdr(0)
				commit := rb.Submit
				if discard {
					commit = rb.Discard
				}
				if err := commit(tc.ptr(rb, p, q), 0); !errors.Is(err, ErrInvalid) {
					t.Fatalf("commit: %v, want ErrInvalid", err)
				}
				if after := *rb.hdr(0); after != before {
					t.Errorf("header %#x after a rejected commit, was %#x", after, before)
				}
				if !committed {
					if err := rb.Submit(p, 0); err != nil {
						t.Fatalf("commit of the record itself: %v", err)
					}
				}
				rd.SetDeadline(time.Now())
				rec, err := rd.Read()
				if tc.name == "discard then submit" {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						t.Errorf("read %q, %v; want nothing", rec.RawSample, err)
					}
				} else if err != nil || len(rec.RawSample) != 64 || string(rec.RawSample[:6]) != "record" {
					t.Errorf("read %q, %v", rec.RawSample, err)
				}
			})
		}
	}
}

// TestRingBufCorruptHeader: a header whose length runs past what was
// produced is an error and a drop, never a large copy.
func TestRingBufCorruptHeader(t *testing.T) {
	tests := []struct {
		name string
		hdr  uint32
	}{
		{"1 GiB", 0x3ffffff0},
		{"past the ring", 4096},
		{"past produced", 64},
		{"discard bit and huge", RingBufDiscardBit | 0x3ffffff0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, rd := newRing(t, 1)
			rb := m.(*ringBuf)
			for _, s := range []string{"first", "second"} {
				if err := rb.Output([]byte(s), 0); err != nil {
					t.Fatal(err)
				}
			}
			*rb.hdr(0) = tc.hdr
			rd.SetDeadline(time.Now())
			recs := make([]Record, 4)
			n, err := rd.ReadBatch(recs)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ReadBatch: %d records, %v; want ErrInvalid", n, err)
			}
			for _, r := range recs[:n] {
				if len(r.RawSample) > 16 {
					t.Errorf("sample of %d bytes", len(r.RawSample))
				}
			}
			if rb.Dropped() != 1 {
				t.Errorf("Dropped = %d, want 1", rb.Dropped())
			}
			// The ring goes on with later records.
			if err := rb.Output([]byte("third"), 0); err != nil {
				t.Fatal(err)
			}
			if rec, err := rd.Read(); err != nil || string(rec.RawSample) != "third" {
				t.Errorf("read after the corrupt record: %q, %v", rec.RawSample, err)
			}
		})
	}
}

// TestRingBufOutOfOrderCommits: records committed in any order are read in
// reservation order, and pending_pos follows the oldest reserved record.
func TestRingBufOutOfOrderCommits(t *testing.T) {
	m, rd := newRing(t, 4)
	rb := m.(*ringBuf)
	var ps []unsafe.Pointer
	for i := range 200 {
		p := rb.Reserve(8)
		if p == nil {
			t.Fatalf("reserve %d failed", i)
		}
		*(*uint64)(p) = uint64(i)
		ps = append(ps, p)
	}
	for i := len(ps) - 1; i >= 1; i-- {
		if err := rb.Submit(ps[i], RBNoWakeup); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := *rb.pendPos, uint64(0); got != want {
		t.Errorf("pending_pos %d, want %d", got, want)
	}
	if err := rb.Discard(ps[0], 0); err != nil {
		t.Fatal(err)
	}
	if got, want := *rb.pendPos, *rb.prodPos; got != want {
		t.Errorf("pending_pos %d, want %d", got, want)
	}
	rd.SetDeadline(time.Now())
	for i := 1; i < 200; i++ {
		rec, err := rd.Read()
		if err != nil || nativeEndian.Uint64(rec.RawSample) != uint64(i) {
			t.Fatalf("record %d: %v %v", i, rec.RawSample, err)
		}
	}
}

// TestRingBufWrapCommit: a record that runs past the end is copied to the
// start, within the ring, and read whole.
func TestRingBufWrapCommit(t *testing.T) {
	for _, pages := range []uint32{1, 512} { // heap and mapped
		m, rd := newRing(t, pages)
		rb := m.(*ringBuf)
		size := int(rb.size)
		if err := rb.Output(make([]byte, size-64), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := rd.Read(); err != nil {
			t.Fatal(err)
		}
		p := rb.Reserve(200)
		if p == nil {
			t.Fatal("reserve failed")
		}
		for i := range 200 {
			*(*byte)(unsafe.Add(p, i)) = byte(i)
		}
		if err := rb.Submit(p, 0); err != nil {
			t.Fatal(err)
		}
		rec, err := rd.Read()
		if err != nil || len(rec.RawSample) != 200 || rec.RawSample[199] != 199 {
			t.Fatalf("read %d bytes, %v", len(rec.RawSample), err)
		}
		// The part past the end is also at the start, as in the kernel's
		// second mapping.
		if b := *(*byte)(rb.data); b != byte(64-8-8) {
			t.Errorf("first byte of the ring %d, want %d", b, 64-8-8)
		}
	}
}

// TestRingBufLargeIsLazy: a 2 GiB ring is a mapping, not 4 GiB of heap,
// works, and is unmapped by Close once no record is reserved.
func TestRingBufLargeIsLazy(t *testing.T) {
	if runtime.GOOS != "linux" || unsafe.Sizeof(uintptr(0)) < 8 {
		t.Skip("rings are mapped on 64-bit Linux")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := mustNew(t, &Spec{Name: "big", Type: RingBuf, MaxEntries: 1 << 31})
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapSys) - int64(before.HeapSys); grew > 64<<20 {
		t.Errorf("creating a 2 GiB ring grew the heap by %d bytes", grew)
	}
	rb := m.(*ringBuf)
	if !rb.mem.isMap {
		t.Fatal("2 GiB ring is not mapped")
	}
	rd, err := NewReader(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Output([]byte("big"), 0); err != nil {
		t.Fatal(err)
	}
	if rec, err := rd.Read(); err != nil || string(rec.RawSample) != "big" {
		t.Fatalf("read %q, %v", rec.RawSample, err)
	}
	p := rb.Reserve(16)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// A reserved record stays writable after Close, until committed.
	*(*uint64)(p) = 1
	if rb.data == nil {
		t.Fatal("unmapped with a record reserved")
	}
	if rb.Reserve(8) != nil {
		t.Error("reserve after Close succeeded")
	}
	if err := rb.Submit(p, 0); err != nil {
		t.Fatal(err)
	}
	if rb.data != nil || rb.mem.mapped != nil {
		t.Error("still mapped after Close and the last commit")
	}
	if RingBufOf(p) != nil {
		t.Error("the registry still names an unmapped ring")
	}
	if err := rb.Submit(p, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("commit after unmap: %v", err)
	}
	if _, err := rd.Read(); !errors.Is(err, ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}
}
