package maps

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// RingBufMap is a BPF_MAP_TYPE_RINGBUF: a multi-producer, single-consumer
// byte ring with the kernel's layout. Programs produce with Output or
// Reserve + Submit/Discard (bpf_ringbuf_output/reserve/submit/discard);
// Go consumes with a Reader.
type RingBufMap interface {
	Map
	// Output copies data into a new record and commits it. It fails with
	// ErrRingBufFull (EAGAIN) when there is no room, counting a drop.
	Output(data []byte, flags uint64) error
	// Reserve reserves a record of size bytes and returns a pointer to its
	// 8-byte aligned data, or nil (counting a drop) when it does not fit.
	// The record must be committed with Submit or Discard.
	Reserve(size uint64) unsafe.Pointer
	// Submit commits a reserved record; Discard commits it as discarded
	// (the reader skips it). flags: RBNoWakeup, RBForceWakeup.
	Submit(p unsafe.Pointer, flags uint64)
	Discard(p unsafe.Pointer, flags uint64)
	// Query is bpf_ringbuf_query: RBAvailData, RBRingSize, RBConsPos,
	// RBProdPos; 0 for unknown flags.
	Query(flag uint64) uint64
	// Dropped counts records that did not fit (failed Reserve and Output).
	Dropped() uint64
}

// ringBuf keeps the kernel's mmap layout in one block:
//
//	page 0: consumer_pos (u64), written by the consumer
//	page 1: producer_pos (u64), pending_pos (u64), written by producers
//	page 2: data, MaxEntries bytes, followed by a second copy
//
// Records are an 8-byte header (u32 len with BUSY bit 31 and DISCARD bit 30,
// u32 pg_off) followed by the data, padded to 8 bytes. The kernel maps the
// data pages twice in a row so that a record wrapping past the end is
// contiguous. Here the block after the data plays that role: Reserve hands
// out contiguous memory that may run into it, and committing a record copies
// the part past the end back to the start of the ring. A reader can then
// read every record contiguously, exactly as from a kernel ring's mmap.
type ringBuf struct {
	base
	mu      sync.Mutex // producers
	consMu  sync.Mutex // consumers
	keep    []uint64
	consPos *uint64
	prodPos *uint64
	pendPos *uint64
	data    unsafe.Pointer
	size    uint64
	mask    uint64
	dropped atomic.Uint64

	notify    chan struct{} // capacity 1: a wakeup for a blocked reader
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

var _ RingBufMap = (*ringBuf)(nil)

func newRingBuf(spec *Spec) (*ringBuf, error) {
	ps := uintptr(hostPageSize)
	r := &ringBuf{
		size:   uint64(spec.MaxEntries),
		mask:   uint64(spec.MaxEntries) - 1,
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	r.init(spec, nil, 1)
	r.ops = notSupported{r.errs}
	r.keep = allocWords(2*ps + 2*uintptr(r.size))
	base := unsafe.Pointer(&r.keep[0])
	r.consPos = (*uint64)(base)
	r.prodPos = (*uint64)(unsafe.Add(base, ps))
	r.pendPos = (*uint64)(unsafe.Add(base, ps+8))
	r.data = unsafe.Add(base, 2*ps)
	registerRingBuf(r)
	return r, nil
}

func (r *ringBuf) hdr(off uint64) *uint32 { return (*uint32)(unsafe.Add(r.data, off)) }

func recordLen(hdrLen uint32) uint64 {
	return (uint64(hdrLen&^(RingBufBusyBit|RingBufDiscardBit)) + RingBufHeaderSize + 7) &^ 7
}

func (r *ringBuf) Reserve(size uint64) unsafe.Pointer {
	if size > ringBufMaxRecord {
		r.dropped.Add(1)
		return nil
	}
	total := (size + RingBufHeaderSize + 7) &^ 7
	if total > r.size {
		r.dropped.Add(1)
		return nil
	}
	r.mu.Lock()
	cons := atomic.LoadUint64(r.consPos)
	prod := atomic.LoadUint64(r.prodPos)
	// pending_pos: the oldest record not yet committed. Like the kernel,
	// never let the ring span more than its size from it, whatever the
	// consumer position says.
	pend := atomic.LoadUint64(r.pendPos)
	for pend < prod {
		l := atomic.LoadUint32(r.hdr(pend & r.mask))
		if l&RingBufBusyBit != 0 {
			break
		}
		pend += recordLen(l)
	}
	atomic.StoreUint64(r.pendPos, pend)
	newProd := prod + total
	if newProd-cons > r.mask || newProd-pend > r.mask {
		r.mu.Unlock()
		r.dropped.Add(1)
		return nil
	}
	off := prod & r.mask
	pgOff := uint32(ringBufKernelPgOff + off/uint64(hostPageSize))
	atomic.StoreUint32((*uint32)(unsafe.Add(r.data, off+4)), pgOff)
	atomic.StoreUint32(r.hdr(off), uint32(size)|RingBufBusyBit)
	atomic.StoreUint64(r.prodPos, newProd)
	r.mu.Unlock()
	return unsafe.Add(r.data, off+RingBufHeaderSize)
}

func (r *ringBuf) Submit(p unsafe.Pointer, flags uint64)  { r.commit(p, flags, false) }
func (r *ringBuf) Discard(p unsafe.Pointer, flags uint64) { r.commit(p, flags, true) }

// commit clears the BUSY bit of the record at p and wakes the reader if it
// is waiting for this record (or if forced). A pointer that is not a
// reserved record of this ring is ignored.
func (r *ringBuf) commit(p unsafe.Pointer, flags uint64, discard bool) {
	off := uint64(uintptr(p) - uintptr(r.data) - RingBufHeaderSize)
	if uintptr(p) < uintptr(r.data)+RingBufHeaderSize || off >= r.size || off%8 != 0 {
		return
	}
	h := r.hdr(off)
	l := atomic.LoadUint32(h)
	if l&RingBufBusyBit == 0 {
		return
	}
	if end := off + recordLen(l); end > r.size {
		// The record runs past the end of the ring: copy that part to
		// the start, where the kernel's second mapping would have put it.
		copy(bytesAt(r.data, uintptr(end-r.size)), bytesAt(unsafe.Add(r.data, r.size), uintptr(end-r.size)))
	}
	nl := l &^ RingBufBusyBit
	if discard {
		nl |= RingBufDiscardBit
	}
	atomic.StoreUint32(h, nl)
	if flags&RBForceWakeup != 0 || (flags&RBNoWakeup == 0 && atomic.LoadUint64(r.consPos)&r.mask == off) {
		r.wake()
	}
}

func (r *ringBuf) wake() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *ringBuf) Output(data []byte, flags uint64) error {
	if flags&^(RBNoWakeup|RBForceWakeup) != 0 {
		return r.errs.invalid
	}
	p := r.Reserve(uint64(len(data)))
	if p == nil {
		return r.errs.rbFull
	}
	copy(bytesAt(p, uintptr(len(data))), data)
	r.commit(p, flags, false)
	return nil
}

func (r *ringBuf) Query(flag uint64) uint64 {
	switch flag {
	case RBAvailData:
		return atomic.LoadUint64(r.prodPos) - atomic.LoadUint64(r.consPos)
	case RBRingSize:
		return r.size
	case RBConsPos:
		return atomic.LoadUint64(r.consPos)
	case RBProdPos:
		return atomic.LoadUint64(r.prodPos)
	}
	return 0
}

func (r *ringBuf) Dropped() uint64 { return r.dropped.Load() }

func (r *ringBuf) LookupElem(unsafe.Pointer, int) unsafe.Pointer { return nil }
func (r *ringBuf) UpdateElem(_, _ unsafe.Pointer, _ uint64, _ int) error {
	return r.errs.notSupp
}
func (r *ringBuf) DeleteElem(unsafe.Pointer) error { return r.errs.notSupp }

// Close wakes blocked readers, which then fail with ErrClosed. Producers can
// still write; nobody reads.
func (r *ringBuf) Close() error {
	r.closeOnce.Do(func() { close(r.done) })
	return r.base.Close()
}

// consume reads the next committed record into buf, skipping discarded
// ones. ok is false when there is none (yet).
func (r *ringBuf) consume(buf []byte) (sample []byte, remaining int, ok bool) {
	r.consMu.Lock()
	defer r.consMu.Unlock()
	for {
		cons := atomic.LoadUint64(r.consPos)
		prod := atomic.LoadUint64(r.prodPos)
		if cons >= prod {
			return buf, 0, false
		}
		off := cons & r.mask
		l := atomic.LoadUint32(r.hdr(off))
		if l&RingBufBusyBit != 0 {
			return buf, 0, false
		}
		next := cons + recordLen(l)
		if l&RingBufDiscardBit == 0 {
			n := uintptr(l &^ RingBufDiscardBit)
			buf = append(buf[:0], bytesAt(unsafe.Add(r.data, off+RingBufHeaderSize), n)...)
			atomic.StoreUint64(r.consPos, next)
			return buf, int(prod - next), true
		}
		atomic.StoreUint64(r.consPos, next)
	}
}
