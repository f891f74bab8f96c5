package maps

import (
	"sync"
	"unsafe"
)

// queueMap implements BPF_MAP_TYPE_QUEUE (FIFO) and BPF_MAP_TYPE_STACK
// (LIFO): a ring of MaxEntries value slots under one mutex, like the kernel's
// spinlocked bpf_queue_stack. Values are copied in and out; no pointer to
// the storage escapes.
type queueMap struct {
	base
	stack  bool
	mu     sync.Mutex
	keep   []uint64
	data   unsafe.Pointer
	stride uintptr
	n      uint32
	tail   uint32 // oldest element
	count  uint32
}

var _ QueueMap = (*queueMap)(nil)

func newQueue(spec *Spec) *queueMap {
	q := &queueMap{stack: spec.Type == Stack, stride: round8(uintptr(spec.ValueSize)), n: spec.MaxEntries}
	q.init(spec, q, 1)
	q.keep = allocWords(q.stride * uintptr(q.n))
	q.data = unsafe.Pointer(&q.keep[0])
	return q
}

func (q *queueMap) slot(i uint32) unsafe.Pointer {
	return unsafe.Add(q.data, uintptr(i%q.n)*q.stride)
}

// PushElem is queue_stack_map_push_elem: BPF_EXIST overwrites the oldest
// element of a full map; BPF_NOEXIST and unknown flags are invalid.
func (q *queueMap) PushElem(value unsafe.Pointer, flags uint64) error {
	if flags&uint64(UpdateNoExist) != 0 || flags > uint64(UpdateExist) {
		return q.errs.invalid
	}
	q.mu.Lock()
	if q.count == q.n {
		if flags != uint64(UpdateExist) {
			q.mu.Unlock()
			return q.errs.full
		}
		q.tail = (q.tail + 1) % q.n
		q.count--
	}
	memmove(q.slot(q.tail+q.count), value, uintptr(q.spec.ValueSize))
	q.count++
	q.mu.Unlock()
	return nil
}

// next returns the slot PopElem/PeekElem read.
func (q *queueMap) next() unsafe.Pointer {
	if q.stack {
		return q.slot(q.tail + q.count - 1)
	}
	return q.slot(q.tail)
}

func (q *queueMap) PopElem(value unsafe.Pointer) error {
	q.mu.Lock()
	if q.count == 0 {
		q.mu.Unlock()
		return q.errs.empty
	}
	memmove(value, q.next(), uintptr(q.spec.ValueSize))
	if !q.stack {
		q.tail = (q.tail + 1) % q.n
	}
	q.count--
	q.mu.Unlock()
	return nil
}

func (q *queueMap) PeekElem(value unsafe.Pointer) error {
	q.mu.Lock()
	if q.count == 0 {
		q.mu.Unlock()
		return q.errs.empty
	}
	memmove(value, q.next(), uintptr(q.spec.ValueSize))
	q.mu.Unlock()
	return nil
}

// LookupElem returns nil: programs use PeekElem (bpf_map_peek_elem).
func (q *queueMap) LookupElem(unsafe.Pointer, int) unsafe.Pointer { return nil }

// UpdateElem pushes, like bpf(BPF_MAP_UPDATE_ELEM) with a NULL key.
func (q *queueMap) UpdateElem(_, value unsafe.Pointer, flags uint64, _ int) error {
	return q.PushElem(value, flags)
}

// DeleteElem is invalid for queues and stacks, like Linux.
func (q *queueMap) DeleteElem(unsafe.Pointer) error { return q.errs.invalid }

// Go side: Lookup peeks, LookupAndDelete pops, Update pushes (key nil).

func (q *queueMap) goLookup(_, out []byte) error {
	return q.PeekElem(unsafe.Pointer(&out[0]))
}

func (q *queueMap) goLookupAndDelete(_, out []byte) error {
	return q.PopElem(unsafe.Pointer(&out[0]))
}

func (q *queueMap) goUpdate(_, value []byte, flags uint64) error {
	return q.PushElem(unsafe.Pointer(&value[0]), flags)
}

func (q *queueMap) goDelete([]byte) error       { return q.errs.invalid }
func (q *queueMap) goNextKey(_, _ []byte) error { return q.errs.invalid }
func (q *queueMap) iterKeys(uint64, []byte) ([]byte, uint64, bool, error) {
	return nil, 0, true, q.errs.invalid
}
