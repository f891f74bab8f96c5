package kbridge

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/maps"
)

// UserRingBuf produces records into a kernel BPF_MAP_TYPE_USER_RINGBUF,
// which kernel programs consume with bpf_user_ringbuf_drain.
//
// Layout (the kernel's, see Documentation/bpf/ringbuf.rst and
// BPF_MAP_TYPE_USER_RINGBUF): page 0 of the map holds the consumer
// position, which the kernel writes and user space may only map read-only;
// page 1 holds the producer position, followed by the data area of
// max_entries bytes, mapped twice in a row so that a record that wraps
// around the end is contiguous. Each record starts 8-byte aligned with an
// 8-byte header: a 32-bit length whose bit 31 (BUSY) marks a reserved,
// unfinished record and bit 30 (DISCARD) a discarded one, then 32 unused
// bits. Reserve writes the header with BUSY set and then advances the
// producer position (a release store, so the kernel sees the header);
// Submit and Discard clear BUSY (and set DISCARD) with an atomic exchange.
// The kernel stops draining at a BUSY record, so records are consumed in
// reservation order.
//
// A UserRingBuf is safe for concurrent use. It does not own the map.
type UserRingBuf struct {
	name string
	cons unsafe.Pointer // consumer page, read-only
	prod unsafe.Pointer // producer page, then the data area twice
	data unsafe.Pointer
	size uint64 // data area size, a power of two
	page uintptr
	mu   sync.Mutex
	once sync.Once
	// resv lists the records reserved and not yet committed, oldest
	// first (guarded by mu). Commits look records up here, never in the
	// header: the header is in memory the kernel and, through a wrong
	// slice, the caller could have written.
	resv []userRecord
}

// userRecord is a record Reserve handed out.
type userRecord struct {
	pos uint64 // producer position of its header
	n   int
}

const (
	ringHeaderSize = maps.RingBufHeaderSize
	ringBusyBit    = maps.RingBufBusyBit
	ringDiscardBit = maps.RingBufDiscardBit
)

// NewUserRingBuf maps the producer side of m.
func NewUserRingBuf(m *ebpf.Map) (*UserRingBuf, error) {
	name := kernelName(m)
	if m.Type() != ebpf.UserRingbuf {
		return nil, fmt.Errorf("map %q: type %s is not a user ring buffer: %w", name, m.Type(), maps.ErrInvalid)
	}
	page := uintptr(os.Getpagesize())
	size := uintptr(m.MaxEntries())
	cons, err := unix.MmapPtr(m.FD(), 0, nil, page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %q: mmap consumer page: %w", name, err)
	}
	prod, err := unix.MmapPtr(m.FD(), int64(page), nil, page+2*size,
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.MunmapPtr(cons, page)
		return nil, fmt.Errorf("map %q: mmap producer page and data: %w", name, err)
	}
	return &UserRingBuf{name: name, cons: cons, prod: prod, data: unsafe.Add(prod, page),
		size: uint64(size), page: page}, nil
}

// ErrRingFull is returned by Reserve when the ring has no room for the
// record until the kernel drains it. It matches maps.ErrRingBufFull and
// EAGAIN.
var ErrRingFull = maps.ErrRingBufFull

func (u *UserRingBuf) consPos() uint64  { return atomic.LoadUint64((*uint64)(u.cons)) }
func (u *UserRingBuf) prodPos() *uint64 { return (*uint64)(u.prod) }

// Reserve reserves a record of n bytes and returns its memory, to fill and
// then pass to Submit or Discard. Records are consumed in reservation
// order: a reserved record blocks the kernel from draining later ones until
// it is submitted or discarded.
func (u *UserRingBuf) Reserve(n int) ([]byte, error) {
	if n <= 0 || n >= ringDiscardBit {
		return nil, fmt.Errorf("user ring buffer %q: reserve %d bytes: %w", u.name, n, maps.ErrInvalid)
	}
	total := (uint64(n) + ringHeaderSize + 7) &^ 7
	if total > u.size {
		return nil, fmt.Errorf("user ring buffer %q: %d-byte record in a %d-byte ring: %w",
			u.name, n, u.size, maps.ErrTooBig)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.prod == nil {
		return nil, fmt.Errorf("user ring buffer %q: %w", u.name, maps.ErrClosed)
	}
	prod := atomic.LoadUint64(u.prodPos())
	if u.size-(prod-u.consPos()) < total {
		return nil, fmt.Errorf("user ring buffer %q: %w", u.name, ErrRingFull)
	}
	mask := u.size - 1
	hdr := (*uint32)(unsafe.Add(u.data, prod&mask))
	atomic.StoreUint32(hdr, uint32(n)|ringBusyBit)
	*(*uint32)(unsafe.Add(unsafe.Pointer(hdr), 4)) = 0
	atomic.StoreUint64(u.prodPos(), prod+total) // release: the kernel may now see the header
	u.resv = append(u.resv, userRecord{pos: prod, n: n})
	return unsafe.Slice((*byte)(unsafe.Add(u.data, (prod+ringHeaderSize)&mask)), n), nil
}

// Submit commits a record returned by Reserve; the kernel may consume it.
// Each record may be committed once: a slice that is not a record still
// reserved (another slice, part of a record, a record already committed,
// or any record after Close) fails with an error wrapping maps.ErrInvalid
// and writes nothing.
func (u *UserRingBuf) Submit(sample []byte) error { return u.commit(sample, false) }

// Discard gives a reserved record up; the kernel skips it. It fails as
// Submit does.
func (u *UserRingBuf) Discard(sample []byte) error { return u.commit(sample, true) }

func (u *UserRingBuf) commit(sample []byte, discard bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := -1
	if u.prod != nil {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(sample)))
		for j, r := range u.resv {
			if uintptr(u.data)+uintptr((r.pos+ringHeaderSize)&(u.size-1)) == p && len(sample) == r.n {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return fmt.Errorf("user ring buffer %q: commit of %d bytes that are not a record still reserved: %w",
			u.name, len(sample), maps.ErrInvalid)
	}
	hdr := (*uint32)(unsafe.Add(u.data, u.resv[i].pos&(u.size-1)))
	v := uint32(u.resv[i].n)
	if discard {
		v |= ringDiscardBit
	}
	atomic.SwapUint32(hdr, v)
	u.resv = append(u.resv[:i], u.resv[i+1:]...)
	return nil
}

// Write copies p into a new record and submits it.
func (u *UserRingBuf) Write(p []byte) error {
	s, err := u.Reserve(len(p))
	if err != nil {
		return err
	}
	copy(s, p)
	return u.Submit(s)
}

// Free returns how many bytes of the data area are free.
func (u *UserRingBuf) Free() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.prod == nil {
		return 0
	}
	return int(u.size - (atomic.LoadUint64(u.prodPos()) - u.consPos()))
}

// Close unmaps the ring. Records reserved and not submitted are lost, and
// the memory Reserve returned must no longer be used.
func (u *UserRingBuf) Close() error {
	var err error
	u.once.Do(func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		err = errors.Join(unix.MunmapPtr(u.prod, u.page+2*uintptr(u.size)), unix.MunmapPtr(u.cons, u.page))
		u.prod, u.cons, u.resv = nil, nil, nil
	})
	if err != nil {
		return fmt.Errorf("user ring buffer %q: close: %w", u.name, err)
	}
	return nil
}
