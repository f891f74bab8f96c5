package maps

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/internal/order"
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
	// 8-byte aligned data, or nil (counting a drop) when it does not fit
	// or the ring is closed. The record must be committed with Submit or
	// Discard.
	Reserve(size uint64) unsafe.Pointer
	// Submit commits a reserved record; Discard commits it as discarded
	// (the reader skips it). flags: RBNoWakeup, RBForceWakeup. Each
	// pointer Reserve returned may be committed once: any other pointer,
	// or a second commit, fails with an error wrapping ErrInvalid and
	// touches no memory of the ring.
	Submit(p unsafe.Pointer, flags uint64) error
	Discard(p unsafe.Pointer, flags uint64) error
	// Write adds one record made of parts, in order, and commits it: for
	// Go producers, in one step where Reserve and Submit take the
	// producer lock twice and track the reservation in between. flags
	// are Output's. It fails with ErrRingBufFull when there is no room.
	Write(parts RecordParts, flags uint64) error
	// WriteCounted is Write that also adds one to *count when it writes
	// the record, under the producer lock, where an atomic add of the
	// caller's would be one more locked instruction per record. Only
	// WriteCounted calls of this one ring may change *count (8-byte
	// aligned); read it with atomic.LoadUint64.
	WriteCounted(parts RecordParts, flags uint64, count *uint64) error
	// Query is bpf_ringbuf_query: RBAvailData, RBRingSize, RBConsPos,
	// RBProdPos; 0 for unknown flags.
	Query(flag uint64) uint64
	// Dropped counts records that did not fit (failed Reserve and Output)
	// and records the reader skipped because their header was corrupt.
	Dropped() uint64
}

// RecordParts are the pieces Write copies into a record, in order; a
// part with a nil Src adds Len zero bytes.
type RecordParts [4]struct {
	Src unsafe.Pointer
	Len uintptr
}

// ringBuf keeps the kernel's layout:
//
//	page 0: consumer_pos (u64), written by the consumer
//	page 1: producer_pos (u64), pending_pos (u64), written by producers
//	        (pending_pos is kept while records are reserved; with none it
//	        may lag producer_pos, which it then equals)
//	data: MaxEntries bytes, followed by a second copy
//
// The position pages are a small Go allocation; the data area, which
// programs write, is separate (see ringMem), so that a large ring can be
// an anonymous mapping that costs nothing until written.
//
// Records are an 8-byte header (u32 len with BUSY bit 31 and DISCARD bit 30,
// u32 pg_off) followed by the data, padded to 8 bytes. The kernel maps the
// data pages twice in a row so that a record wrapping past the end is
// contiguous. Here the block after the data plays that role: Reserve hands
// out contiguous memory that may run into it, and committing a record copies
// the part past the end back to the start of the ring. A reader can then
// read every record contiguously, exactly as from a kernel ring's mmap.
//
// The headers lie next to memory that programs write, so the producer side
// never reads them back: which records are reserved, and how long they are,
// is kept in resv, Go memory no program can reach. A forged or replayed
// record pointer therefore cannot make a commit copy or write anything but
// a record Reserve handed out. The consumer, which must read the headers,
// checks each length against what was produced before copying.
type ringBuf struct {
	base
	// mu serializes producers (positions, resv, closed): a spin lock
	// released with a plain store on amd64 (stripeLock), where a
	// sync.Mutex's unlock is one more locked instruction per record.
	mu     stripeLock
	consMu sync.Mutex // consumers
	pos    []uint64   // the two position pages
	// consPos, prodPos and pendPos point into pos.
	consPos *uint64
	prodPos *uint64
	pendPos *uint64
	mem     *ringMem
	data    unsafe.Pointer // mem's first byte, nil once unmapped
	size    uint64
	mask    uint64
	// pageShift is log2 of the page size, which the header's pg_off
	// counts in: a shift where a division by the page size, a variable,
	// is a DIV of 10 to 20 cycles per record.
	pageShift uint8
	dropped   atomic.Uint64

	// resv[resvHead:] are the records from pending_pos to producer_pos,
	// in ring order: every record still reserved, and those committed
	// after it. Guarded by mu.
	resv     []reservation
	resvHead int
	closed   bool // guarded by mu and consMu: no more reservations

	notify    chan struct{} // capacity 1: a wakeup for a blocked reader
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// reservation is a record Reserve handed out.
type reservation struct {
	pos       uint64 // producer position of its header
	size      uint32 // data bytes
	committed bool
}

var _ RingBufMap = (*ringBuf)(nil)

func newRingBuf(spec *Spec) (*ringBuf, error) {
	ps := uintptr(hostPageSize)
	r := &ringBuf{
		size: uint64(spec.MaxEntries),
		mask: uint64(spec.MaxEntries) - 1,
		// Page sizes are powers of two.
		pageShift: uint8(bits.TrailingZeros(uint(hostPageSize))),
		notify:    make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	r.init(spec, nil, 1)
	r.ops = notSupported{r.errs}
	if r.size > uint64(^uintptr(0)/4) {
		// The data area and its copy would not fit the address space.
		return nil, fmt.Errorf("map %q: ring buffer of %d bytes does not fit the address space: %w", spec.Name, r.size, ErrTooBig)
	}
	mem, err := newRingMem(2 * uintptr(r.size))
	if err != nil {
		return nil, fmt.Errorf("map %q: ring buffer of %d bytes: %w", spec.Name, r.size, err)
	}
	r.mem, r.data = mem, mem.addr
	if mem.isMap {
		runtime.AddCleanup(r, (*ringMem).unmap, mem)
	}
	r.pos = allocWords(2 * ps)
	base := unsafe.Pointer(&r.pos[0])
	r.consPos = (*uint64)(base)
	r.prodPos = (*uint64)(unsafe.Add(base, ps))
	r.pendPos = (*uint64)(unsafe.Add(base, ps+8))
	registerRingBuf(r)
	return r, nil
}

func (r *ringBuf) hdr(off uint64) *uint32 { return (*uint32)(unsafe.Add(r.data, off)) }

// pgOff is the pg_off of a record header at ring offset off, as the
// kernel writes it: pages from the start of the ring map, which are the
// position pages and then the data.
func (r *ringBuf) pgOff(off uint64) uint32 {
	return uint32(ringBufKernelPgOff + off>>r.pageShift)
}

// recordTotal is the ring space of a record of size data bytes.
func recordTotal(size uint64) uint64 { return (size + RingBufHeaderSize + 7) &^ 7 }

func (r *ringBuf) Reserve(size uint64) unsafe.Pointer {
	prod, newProd, ok := r.claim(size)
	if !ok {
		return nil
	}
	r.resv = append(r.resv, reservation{pos: prod, size: uint32(size)})
	off := prod & r.mask
	pgOff := r.pgOff(off)
	order.StoreRelease32((*uint32)(unsafe.Add(r.data, off+4)), pgOff)
	order.StoreRelease32(r.hdr(off), uint32(size)|RingBufBusyBit)
	if r.resvHead == len(r.resv)-1 { // the only one: pending_pos moves to it
		order.StoreRelease64(r.pendPos, prod)
	}
	order.StoreRelease64(r.prodPos, newProd)
	r.mu.Unlock()
	return unsafe.Add(r.data, off+RingBufHeaderSize)
}

// claim takes the producer lock and finds room for a record of size data
// bytes: at producer position prod, moving it to newProd. When there is
// none (or the ring is closed) it counts a drop and returns with the lock
// released; else the caller writes the record and unlocks.
func (r *ringBuf) claim(size uint64) (prod, newProd uint64, ok bool) {
	total := recordTotal(size)
	if size > ringBufMaxRecord || total > r.size {
		r.dropped.Add(1)
		return 0, 0, false
	}
	r.mu.Lock()
	cons := atomic.LoadUint64(r.consPos)
	prod = atomic.LoadUint64(r.prodPos)
	// pending_pos: the oldest record not yet committed. Like the kernel,
	// never let the ring span more than its size from it, whatever the
	// consumer position says.
	pend := prod
	if r.resvHead < len(r.resv) {
		pend = r.resv[r.resvHead].pos
	}
	newProd = prod + total
	if r.closed || newProd-cons > r.mask || newProd-pend > r.mask {
		r.mu.Unlock()
		r.dropped.Add(1)
		return 0, 0, false
	}
	return prod, newProd, true
}

func (r *ringBuf) Write(parts RecordParts, flags uint64) error {
	return r.WriteCounted(parts, flags, nil)
}

func (r *ringBuf) WriteCounted(parts RecordParts, flags uint64, count *uint64) error {
	if flags&^(RBNoWakeup|RBForceWakeup) != 0 {
		return r.errs.invalid
	}
	var size uint64
	for i := range parts {
		size += uint64(parts[i].Len)
	}
	dst, c, ok := r.begin(size)
	if !ok {
		return r.errs.rbFull
	}
	for i := range parts {
		p := &parts[i]
		switch {
		case p.Len == 0: // no call
		case p.Src == nil:
			clear(bytesAt(dst, p.Len))
		default:
			copy(bytesAt(dst, p.Len), bytesAt(p.Src, p.Len))
		}
		dst = unsafe.Add(dst, p.Len)
	}
	r.publish(c, flags, count)
	return nil
}

// claimed is a record that begin found room for and publish commits:
// its producer position, the position after it, and its data size.
type claimed struct {
	prod, newProd uint64
	size          uint32
}

// begin takes the producer lock and claims room for a record of size
// data bytes, which the caller writes at dst, contiguous even where it
// runs past the end of the ring, and then publishes (publish releases the
// lock). false, with the lock released and a drop counted, when there is
// no room.
func (r *ringBuf) begin(size uint64) (dst unsafe.Pointer, c claimed, ok bool) {
	prod, newProd, ok := r.claim(size)
	if !ok {
		return nil, claimed{}, false
	}
	return unsafe.Add(r.data, prod&r.mask+RingBufHeaderSize), claimed{prod, newProd, uint32(size)}, true
}

// publish commits the record begin claimed and the caller wrote, adds one
// to *count if count is not nil, releases the producer lock and wakes the
// reader if it waits for the record (flags are Output's).
func (r *ringBuf) publish(c claimed, flags uint64, count *uint64) {
	// The record is complete before producer_pos covers it, so no reader
	// sees it busy, and it needs no reservation unless an older record
	// is still reserved (pending_pos stays there).
	off := c.prod & r.mask
	r.unwrap(off, c.newProd-c.prod)
	// Plain stores: the release store of producer_pos below publishes the
	// header with the record (readers load producer_pos first). Locked
	// instructions are most of a record's cost, so pending_pos is left
	// alone too: with nothing reserved, producers take it to be
	// producer_pos (claim), and Reserve sets it again.
	*(*uint32)(unsafe.Add(r.data, off+4)) = r.pgOff(off)
	*r.hdr(off) = c.size
	if r.resvHead < len(r.resv) {
		r.resv = append(r.resv, reservation{pos: c.prod, size: c.size, committed: true})
	}
	if count != nil {
		order.AddOwned(count)
	}
	// A release (a plain store on amd64, where a locked exchange is most
	// of the cost of a small record): readers load producer_pos, then the
	// header and the data.
	order.StoreRelease64(r.prodPos, c.newProd)
	wake := r.wakes(off, flags)
	r.mu.Unlock()
	if wake {
		r.wake()
	}
}

func (r *ringBuf) Submit(p unsafe.Pointer, flags uint64) error  { return r.commit(p, flags, false) }
func (r *ringBuf) Discard(p unsafe.Pointer, flags uint64) error { return r.commit(p, flags, true) }

// find returns the index in resv of the record still reserved whose data
// is at ring offset off+RingBufHeaderSize, or -1. Caller holds mu.
func (r *ringBuf) find(off uint64) int {
	live := r.resv[r.resvHead:]
	if len(live) == 0 {
		return -1
	}
	// Reserved records span less than the ring from the first, so an
	// offset names at most one position.
	pos := live[0].pos + (off-live[0].pos)&r.mask
	i := len(live) - 1 // the newest is the usual case
	if live[i].pos != pos {
		lo, hi := 0, i
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if live[m].pos < pos {
				lo = m + 1
			} else {
				hi = m
			}
		}
		i = lo
	}
	if live[i].pos != pos || live[i].committed {
		return -1
	}
	return r.resvHead + i
}

// commit clears the BUSY bit of the record at p and wakes the reader if it
// is waiting for this record (or if forced). A pointer that is not a record
// of this ring still reserved fails with ErrInvalid and changes nothing:
// what is reserved is known from resv, never from a header.
func (r *ringBuf) commit(p unsafe.Pointer, flags uint64, discard bool) error {
	r.mu.Lock()
	a, d := uintptr(p), uintptr(r.data)
	off := uint64(a - d - RingBufHeaderSize)
	i := -1
	if d != 0 && a >= d+RingBufHeaderSize && off < r.size && off%8 == 0 {
		i = r.find(off)
	}
	if i < 0 {
		r.mu.Unlock()
		return r.errs.invalid
	}
	rec := &r.resv[i]
	r.unwrap(off, recordTotal(uint64(rec.size)))
	nl := uint32(rec.size)
	if discard {
		nl |= RingBufDiscardBit
	}
	order.StoreRelease32(r.hdr(off), nl)
	rec.committed = true
	r.popCommitted()
	idle := r.closed && r.resvHead == len(r.resv)
	wake := r.wakes(off, flags)
	r.mu.Unlock()
	if wake {
		r.wake()
	}
	if idle {
		r.release()
	}
	return nil
}

// popCommitted drops the committed records at the front of resv and
// advances pending_pos past them. Caller holds mu.
func (r *ringBuf) popCommitted() {
	for r.resvHead < len(r.resv) && r.resv[r.resvHead].committed {
		r.resvHead++
	}
	switch {
	case r.resvHead == len(r.resv):
		r.resv, r.resvHead = r.resv[:0], 0
		order.StoreRelease64(r.pendPos, atomic.LoadUint64(r.prodPos))
		return
	case r.resvHead >= 64 && 2*r.resvHead >= len(r.resv):
		// A record held long behind many others: reuse the front.
		n := copy(r.resv, r.resv[r.resvHead:])
		r.resv, r.resvHead = r.resv[:n], 0
	}
	order.StoreRelease64(r.pendPos, r.resv[r.resvHead].pos)
}

// unwrap copies the part of the record of total bytes at offset off that
// runs past the end of the ring to its start, where the kernel's second
// mapping would have put it. end-size <= total <= size: both sides stay in
// the data area.
func (r *ringBuf) unwrap(off, total uint64) {
	if end := off + total; end > r.size {
		n := uintptr(end - r.size)
		copy(bytesAt(r.data, n), bytesAt(unsafe.Add(r.data, r.size), n))
	}
}

// wakes reports whether the commit of the record at offset off must wake
// the reader: if flags force it, or unless they forbid it, when the
// reader waits for that record. Caller holds mu, and has published the
// record.
//
// Producers publish with plain stores and release mu with one (amd64), so
// nothing orders their publication before this load of consumer_pos: on
// its own, a reader could miss the record and a producer miss the
// reader's new position, and the reader sleep with a record ready. So a
// reader makes its last check before sleeping under mu too (ready): it
// either sees the record, or this sees its position.
func (r *ringBuf) wakes(off, flags uint64) bool {
	return flags&RBForceWakeup != 0 || (flags&RBNoWakeup == 0 && atomic.LoadUint64(r.consPos)&r.mask == off)
}

// ready reports, under the producer lock, whether the record at the
// consumer position is committed: the reader's last check before it waits
// for a wakeup (see wakes).
func (r *ringBuf) ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.data == nil { // released: the reader's wait ends on done
		return false
	}
	cons, prod := atomic.LoadUint64(r.consPos), atomic.LoadUint64(r.prodPos)
	return cons < prod && atomic.LoadUint32(r.hdr(cons&r.mask))&RingBufBusyBit == 0
}

func (r *ringBuf) wake() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *ringBuf) Output(data []byte, flags uint64) error {
	var parts RecordParts
	parts[0].Src, parts[0].Len = unsafe.Pointer(unsafe.SliceData(data)), uintptr(len(data))
	return r.Write(parts, flags)
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

// Close wakes blocked readers, which then fail with ErrClosed, and makes
// later reservations fail (as drops). Records reserved before stay
// writable until committed; a mapped data area is unmapped once none is
// left, since a program may still be writing one.
func (r *ringBuf) Close() error {
	r.closeOnce.Do(func() {
		close(r.done)
		r.mu.Lock()
		r.closed = true
		idle := r.resvHead == len(r.resv)
		r.mu.Unlock()
		if idle {
			r.release()
		}
	})
	return r.base.Close()
}

// release unmaps a closed ring's mapped data area once no record is
// reserved. Nothing reads or writes the data area afterwards: producers
// and the consumer check data under their locks, and the registry no
// longer names the ring, whose addresses the system may reuse.
func (r *ringBuf) release() {
	if !r.mem.isMap {
		return
	}
	r.consMu.Lock()
	r.mu.Lock()
	if r.closed && r.resvHead == len(r.resv) && r.data != nil {
		unregisterRingBuf(r)
		r.data = nil
		r.mem.unmap()
	}
	r.mu.Unlock()
	r.consMu.Unlock()
}

// consume reads the next committed record into buf, skipping discarded
// ones. ok is false when there is none (yet). A header whose length does
// not fit in what was produced (the ring is corrupt) makes it drop
// everything produced so far, count a drop and return an error wrapping
// ErrInvalid: it never copies more than the ring holds.
func (r *ringBuf) consume(buf []byte) (sample []byte, remaining int, ok bool, err error) {
	r.consMu.Lock()
	defer r.consMu.Unlock()
	if r.data == nil {
		return buf, 0, false, nil
	}
	for {
		cons := atomic.LoadUint64(r.consPos)
		prod := atomic.LoadUint64(r.prodPos)
		if cons >= prod {
			return buf, 0, false, nil
		}
		off := cons & r.mask
		l := atomic.LoadUint32(r.hdr(off))
		if l&RingBufBusyBit != 0 {
			return buf, 0, false, nil
		}
		// prod-cons <= size: the record's data, contiguous from off, ends
		// inside the data area and its copy.
		n := uint64(l &^ RingBufDiscardBit)
		if avail := prod - cons; avail > r.size || recordTotal(n) > avail {
			order.StoreRelease64(r.consPos, prod)
			r.dropped.Add(1)
			return buf, 0, false, r.wrapf(ErrInvalid, "ring buffer record at position %d: header length %#x, but only %d bytes were produced", cons, l, prod-cons)
		}
		next := cons + recordTotal(n)
		if l&RingBufDiscardBit == 0 {
			buf = append(buf[:0], bytesAt(unsafe.Add(r.data, off+RingBufHeaderSize), uintptr(n))...)
			order.StoreRelease64(r.consPos, next)
			return buf, int(prod - next), true, nil
		}
		order.StoreRelease64(r.consPos, next)
	}
}
