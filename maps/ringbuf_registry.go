package maps

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// bpf_ringbuf_submit and bpf_ringbuf_discard receive only the record
// pointer. The kernel finds the ring from the header's page offset; here a
// small registry maps data address ranges to live ring buffers. It holds
// weak pointers, so it never keeps a ring alive.

type ringRange struct {
	start, end uintptr
	rb         weak.Pointer[ringBuf]
}

var (
	ringsMu sync.Mutex
	rings   atomic.Pointer[[]ringRange] // copy-on-write
)

func registerRingBuf(r *ringBuf) {
	start := uintptr(r.data)
	end := start + 2*uintptr(r.size)
	ringsMu.Lock()
	var next []ringRange
	if cur := rings.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, ringRange{start, end, weak.Make(r)})
	rings.Store(&next)
	ringsMu.Unlock()
	runtime.AddCleanup(r, unregisterRing, start)
}

func unregisterRing(start uintptr) {
	ringsMu.Lock()
	defer ringsMu.Unlock()
	cur := rings.Load()
	if cur == nil {
		return
	}
	next := make([]ringRange, 0, len(*cur))
	for _, e := range *cur {
		if e.start != start || e.rb.Value() != nil {
			next = append(next, e)
		}
	}
	rings.Store(&next)
}

// unregisterRingBuf forgets r before its mapped data area is unmapped:
// the system may map something else, another ring even, at its addresses.
func unregisterRingBuf(r *ringBuf) {
	ringsMu.Lock()
	defer ringsMu.Unlock()
	cur := rings.Load()
	if cur == nil {
		return
	}
	next := make([]ringRange, 0, len(*cur))
	for _, e := range *cur {
		if e.rb.Value() != r {
			next = append(next, e)
		}
	}
	rings.Store(&next)
}

// RingBufOf returns the ring buffer a pointer returned by Reserve belongs
// to, or nil. Helpers implementing bpf_ringbuf_submit/discard, which get no
// map argument, use it. It does not allocate or lock.
func RingBufOf(p unsafe.Pointer) RingBufMap {
	cur := rings.Load()
	if cur == nil {
		return nil
	}
	a := uintptr(p)
	for _, e := range *cur {
		if a >= e.start && a < e.end {
			if r := e.rb.Value(); r != nil {
				return r
			}
		}
	}
	return nil
}
