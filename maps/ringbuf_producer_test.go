package maps

import (
	"bytes"
	"errors"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestRingProducer writes records of several sizes in place, enough to
// wrap the ring many times, and reads each back whole: what Begin and
// Commit produce is what WriteCounted would, records running past the end
// of the ring included, with the kernel's header (pg_off counts pages from
// the start of the ring map), and Count counts each under the lock.
func TestRingProducer(t *testing.T) {
	rb, rd := newRing(t, 2)
	r := rb.(*ringBuf)
	p, err := NewRingProducer(rb)
	if err != nil {
		t.Fatal(err)
	}
	var count uint64
	for i := range 1000 {
		size := uint64(1 + i%200)
		data, c, ok := p.Begin(size)
		if !ok {
			t.Fatalf("record %d: no room in an empty ring", i)
		}
		if uintptr(data)%8 != 0 {
			t.Fatalf("record %d: data at %p, not 8-byte aligned", i, data)
		}
		want := bytes.Repeat([]byte{byte(i)}, int(size))
		copy(unsafe.Slice((*byte)(data), size), want)
		c.Count(&count)
		p.Commit(c)
		off := uint64(uintptr(data) - uintptr(r.data) - RingBufHeaderSize)
		if got, want := *(*uint32)(unsafe.Add(r.data, off+4)), uint32(ringBufKernelPgOff+off/uint64(hostPageSize)); got != want {
			t.Fatalf("record %d at offset %d: pg_off %d, want %d", i, off, got, want)
		}
		rec, err := rd.Read()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(rec.RawSample, want) {
			t.Fatalf("record %d: read %x, wrote %x", i, rec.RawSample, want)
		}
	}
	if got := atomic.LoadUint64(&count); got != 1000 {
		t.Errorf("count %d, want 1000", got)
	}
	if rb.Query(RBProdPos) <= rb.Query(RBRingSize) {
		t.Errorf("produced %d bytes: the ring did not wrap", rb.Query(RBProdPos))
	}
}

// TestRingProducerFull checks that Begin refuses a record that does not
// fit, counting a drop and holding nothing (the next write goes through),
// and refuses every record once the ring is closed.
func TestRingProducerFull(t *testing.T) {
	rb, _ := newRing(t, 1)
	p, err := NewRingProducer(rb)
	if err != nil {
		t.Fatal(err)
	}
	size := rb.Query(RBRingSize)
	if _, _, ok := p.Begin(size); ok {
		t.Fatal("Begin of a record as large as the ring succeeded")
	}
	if rb.Dropped() != 1 {
		t.Errorf("Dropped() = %d, want 1", rb.Dropped())
	}
	n := 0
	for {
		data, c, ok := p.Begin(100)
		if !ok {
			break
		}
		clear(unsafe.Slice((*byte)(data), 100))
		p.Commit(c)
		n++
	}
	if n != int(size/recordTotal(100)) {
		t.Errorf("%d records of 100 bytes fit a %d-byte ring", n, size)
	}
	if err := rb.Write(RecordParts{}, 0); err != nil { // an empty record still fits: the lock was released
		t.Errorf("Write after a refused Begin: %v", err)
	}
	rb.Close()
	if _, _, ok := p.Begin(8); ok {
		t.Error("Begin on a closed ring succeeded")
	}
}

func TestNewRingProducerNotARing(t *testing.T) {
	m := mustNew(t, &Spec{Name: "a", Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if _, err := NewRingProducer(m); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewRingProducer(array) = %v, want ErrInvalid", err)
	}
}
