package maps

import (
	"fmt"
	"unsafe"

	"github.com/uebpf/uebpf/internal/order"
)

// RingProducer writes records into a ring buffer in place, for trusted Go
// producers whose records are a few copies and stores (tracepoint
// sessions): Begin claims the room and returns where the record goes,
// the caller writes it there, and Commit publishes it. Where
// RingBufMap.WriteCounted gathers a record from parts, through an
// interface call and a copy per part, a caller of Begin stores small
// fixed fields directly.
//
// Begin returns with the ring's producer lock held, a spin lock that
// every other producer of the ring waits on, until Commit: between the
// two the caller may only write the record's bytes (no blocking, no
// calls that may panic), and must Commit every record Begin returned.
type RingProducer struct{ r *ringBuf }

// RingClaim is a record Begin claimed room for, to pass to Commit.
type RingClaim struct{ c claimed }

// NewRingProducer returns the producer side of m, a RingBuf map.
func NewRingProducer(m Map) (*RingProducer, error) {
	r, ok := m.(*ringBuf)
	if !ok {
		return nil, fmt.Errorf("ring producer of a %T: %w", m, ErrInvalid)
	}
	return &RingProducer{r: r}, nil
}

// Begin claims room for a record of size data bytes and returns its
// 8-byte aligned data, where the caller writes all size bytes (the ring
// holds what earlier records left there), contiguous even where the
// record runs past the end of the ring (Commit moves that part to the
// start, where the kernel's second mapping would show it). When there is
// no room, or the ring is closed, it counts a drop and returns false,
// with nothing held.
func (p *RingProducer) Begin(size uint64) (data unsafe.Pointer, c RingClaim, ok bool) {
	data, c.c, ok = p.r.begin(size)
	return data, c, ok
}

// Count adds one to *n under the ring's producer lock, which c holds
// from Begin to Commit: a plain add where an atomic one would be one more
// locked instruction per record (an atomic add under the race detector and
// off amd64). Only Count and WriteCounted calls of this one ring may
// change *n (8-byte aligned); read it with atomic.LoadUint64.
func (c RingClaim) Count(n *uint64) { order.AddOwned(n) }

// Commit publishes the record c and wakes a reader waiting for it.
func (p *RingProducer) Commit(c RingClaim) { p.r.publish(c.c, 0, nil) }
