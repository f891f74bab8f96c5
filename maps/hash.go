package maps

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// hashMap implements BPF_MAP_TYPE_HASH, PERCPU_HASH, LRU_HASH and
// LRU_PERCPU_HASH.
//
// Layout. Elements live in slabs ("chunks") of []uint64 owned by the map and
// are named by a 32-bit index. An element is
//
//	[tag u32][next u32]([lru state u32][pad u32])[key, padded to 8][value, padded to 8]
//
// where per-CPU maps keep their values out of line, in one cache-line aligned
// region per CPU at the end of each chunk. Buckets (a power of two, at least
// MaxEntries) hold the index of the first element of a chain.
//
// Chains end with a "nulls" marker, chainEnd|bucket, as in the kernel's
// hlist_nulls: a reader that followed an element which was deleted and reused
// in another bucket ends on the wrong marker and restarts.
//
// Concurrency. Lookups take no lock: they read bucket heads, tags, next links
// and key words with atomic loads. Writers (update, delete) lock the bucket's
// stripe of a striped mutex array and publish a new element with an atomic
// store of the bucket head after writing its key, tag and value. Element
// slots come from a lock-free free list (a tagged Treiber stack) or a bump
// counter; the map is full when both are exhausted. Deleted elements are
// recycled (like the kernel's preallocated hash maps), never freed.
type hashMap struct {
	base
	lru, percpu bool

	keySize  uintptr
	keyOff   uintptr // offset of the key in an element
	valOff   uintptr // offset of the inline value (not per-CPU)
	elemSize uintptr

	chunkShift      uint
	chunkMask       uint32
	chunkSize       uintptr // bytes
	cpuRegionOff    uintptr // per-CPU: start of CPU 0's value region in a chunk
	cpuRegionStride uintptr // per-CPU: distance between CPU regions
	chunks          []unsafe.Pointer
	keep            [][]uint64
	allocMu         sync.Mutex

	buckets    []uint32
	bucketMask uint32
	locks      []paddedMutex
	lockMask   uint32
	seed       uint64

	bump  atomic.Uint32 // slots ever handed out
	free  atomic.Uint64 // free list: ABA tag << 32 | (index + 1)
	clock atomic.Uint32 // LRU clock hand
}

type paddedMutex struct {
	sync.Mutex
	_ [cacheLine - 8]byte
}

const (
	chainEnd = 1 << 31 // next/bucket word: end of chain, low bits = bucket
	allCPUs  = -1      // cpu argument of the Go side: value has every CPU's slot

	maxEagerPrealloc = 256 << 20 // larger maps allocate their slabs on demand
	targetChunkBytes = 256 << 10
	maxLocks         = 1024
)

func newHash(spec *Spec, ncpu int) (*hashMap, error) {
	h := &hashMap{
		lru:     spec.Type == LRUHash || spec.Type == LRUCPUHash,
		percpu:  spec.Type.HasPerCPUValue(),
		keySize: uintptr(spec.KeySize),
	}
	h.init(spec, h, ncpu)
	h.keyOff = 8
	if h.lru {
		h.keyOff = 16
	}
	h.valOff = h.keyOff + round8(h.keySize)
	h.elemSize = h.valOff
	if !h.percpu {
		h.elemSize += h.valStride
	}
	if h.elemSize < cacheLine/2 {
		// Small elements get a power-of-two size so that none straddles
		// two cache lines: one miss per element visited.
		h.elemSize = uintptr(1) << bits.Len64(uint64(h.elemSize-1))
	}
	perElem := h.elemSize
	if h.percpu {
		perElem += uintptr(h.ncpu) * h.valStride
	}
	maxPow2 := uint(bits.Len32(spec.MaxEntries - 1)) // log2 of MaxEntries rounded up
	// A chunk holds the largest power of two of elements that fits in
	// targetChunkBytes (at least one).
	if perElem < targetChunkBytes {
		h.chunkShift = min(uint(bits.Len64(uint64(targetChunkBytes/perElem)))-1, maxPow2)
	}
	chunkLen := uintptr(1) << h.chunkShift
	h.chunkMask = uint32(chunkLen - 1)
	h.chunkSize = chunkLen * h.elemSize
	if h.percpu {
		h.cpuRegionOff = roundCacheLine(h.chunkSize)
		h.cpuRegionStride = roundCacheLine(chunkLen * h.valStride)
		h.chunkSize = h.cpuRegionOff + uintptr(h.ncpu)*h.cpuRegionStride
	}
	nchunks := (uintptr(spec.MaxEntries) + chunkLen - 1) >> h.chunkShift
	h.chunks = make([]unsafe.Pointer, nchunks)
	h.keep = make([][]uint64, nchunks)

	nb := uint32(1) << maxPow2
	h.buckets = make([]uint32, nb)
	for i := range h.buckets {
		h.buckets[i] = chainEnd | uint32(i)
	}
	h.bucketMask = nb - 1
	nl := min(nb, maxLocks)
	h.locks = make([]paddedMutex, nl)
	h.lockMask = nl - 1
	if spec.Flags&FlagZeroSeed == 0 {
		h.seed = randomSeed()
	}
	if spec.Flags&FlagNoPrealloc == 0 && uint64(nchunks)*uint64(h.chunkSize) <= maxEagerPrealloc {
		for c := range nchunks {
			h.ensureChunk(uint32(c << h.chunkShift))
		}
	}
	return h, nil
}

func (h *hashMap) elem(e uint32) unsafe.Pointer {
	c := atomic.LoadPointer(&h.chunks[e>>h.chunkShift])
	return unsafe.Add(c, uintptr(e&h.chunkMask)*h.elemSize)
}

func tagPtr(p unsafe.Pointer) *uint32  { return (*uint32)(p) }
func nextPtr(p unsafe.Pointer) *uint32 { return (*uint32)(unsafe.Add(p, 4)) }

// valuePtr returns the value of element e (at p) for cpu.
func (h *hashMap) valuePtr(e uint32, p unsafe.Pointer, cpu int) unsafe.Pointer {
	if !h.percpu {
		return unsafe.Add(p, h.valOff)
	}
	c := atomic.LoadPointer(&h.chunks[e>>h.chunkShift])
	return unsafe.Add(c, h.cpuRegionOff+uintptr(cpu)*h.cpuRegionStride+uintptr(e&h.chunkMask)*h.valStride)
}

func (h *hashMap) hashOf(key unsafe.Pointer) (bucket, tag uint32) {
	var hv uint64
	if h.keySize == 8 {
		hv = hashKey8(*(*uint64)(key), h.seed)
	} else {
		hv = hashKey(key, h.keySize, h.seed)
	}
	return uint32(hv>>32) & h.bucketMask, uint32(hv)
}

func (h *hashMap) lock(b uint32) *paddedMutex { return &h.locks[b&h.lockMask] }

// keyEq compares the key stored in the element at p with the caller's key.
func (h *hashMap) keyEq(p, key unsafe.Pointer) bool {
	kp := unsafe.Add(p, h.keyOff)
	n := h.keySize
	var off uintptr
	for ; off+8 <= n; off += 8 {
		if loadWordAtomic(unsafe.Add(kp, off)) != *(*uint64)(unsafe.Add(key, off)) {
			return false
		}
	}
	if off < n {
		return loadWordAtomic(unsafe.Add(kp, off)) == loadPartial(unsafe.Add(key, off), n-off)
	}
	return true
}

func (h *hashMap) storeKey(p, key unsafe.Pointer) {
	kp := unsafe.Add(p, h.keyOff)
	n := h.keySize
	var off uintptr
	for ; off+8 <= n; off += 8 {
		atomic.StoreUint64((*uint64)(unsafe.Add(kp, off)), *(*uint64)(unsafe.Add(key, off)))
	}
	if off < n {
		storePartialAtomic(unsafe.Add(kp, off), unsafe.Add(key, off), n-off)
	}
}

// lookup finds key without locking. It returns the element's index and
// address.
func (h *hashMap) lookup(key unsafe.Pointer) (uint32, unsafe.Pointer) {
	if h.keySize == 8 {
		return h.lookup8(key)
	}
	b, tag := h.hashOf(key)
	for range 4 {
		x := atomic.LoadUint32(&h.buckets[b])
		for steps := uint32(0); x&chainEnd == 0 && steps <= h.spec.MaxEntries; steps++ {
			p := h.elem(x)
			if atomic.LoadUint32(tagPtr(p)) == tag && h.keyEq(p, key) {
				return x, p
			}
			x = atomic.LoadUint32(nextPtr(p))
		}
		if x == chainEnd|b {
			return 0, nil
		}
		// Wandered into another chain through a recycled element: retry.
	}
	mu := h.lock(b)
	mu.Lock()
	e, p, _ := h.findLocked(b, tag, key)
	mu.Unlock()
	return e, p
}

// lookup8 is lookup specialised for 8-byte keys, the most common size
// (u64 ids, pid_tgid).
func (h *hashMap) lookup8(key unsafe.Pointer) (uint32, unsafe.Pointer) {
	k := *(*uint64)(key)
	hv := hashKey8(k, h.seed)
	b, tag := uint32(hv>>32)&h.bucketMask, uint32(hv)
	limit := h.spec.MaxEntries
	for range 4 {
		x := atomic.LoadUint32(&h.buckets[b])
		for steps := uint32(0); x&chainEnd == 0 && steps <= limit; steps++ {
			p := h.elem(x)
			if atomic.LoadUint32(tagPtr(p)) == tag && loadWordAtomic(unsafe.Add(p, h.keyOff)) == k {
				return x, p
			}
			x = atomic.LoadUint32(nextPtr(p))
		}
		if x == chainEnd|b {
			return 0, nil
		}
	}
	mu := h.lock(b)
	mu.Lock()
	e, p, _ := h.findLocked(b, tag, key)
	mu.Unlock()
	return e, p
}

// findLocked finds key in bucket b, whose lock the caller holds. prev is the
// word that links to the element.
func (h *hashMap) findLocked(b, tag uint32, key unsafe.Pointer) (e uint32, p unsafe.Pointer, prev *uint32) {
	prev = &h.buckets[b]
	for x := atomic.LoadUint32(prev); x&chainEnd == 0; x = atomic.LoadUint32(prev) {
		q := h.elem(x)
		if atomic.LoadUint32(tagPtr(q)) == tag && h.keyEq(q, key) {
			return x, q, prev
		}
		prev = nextPtr(q)
	}
	return 0, nil, nil
}

// writeValue stores a value into element e. cpu >= 0 is the program side:
// value is ValueSize bytes for that CPU (per-CPU maps zero the other CPUs'
// slots of a new element). cpu == allCPUs is the Go side: value is the
// syscall layout, written with atomic word stores.
func (h *hashMap) writeValue(e uint32, p, value unsafe.Pointer, cpu int, isNew bool) {
	vs := uintptr(h.spec.ValueSize)
	if cpu == allCPUs {
		for c := range h.ncpu {
			atomicCopyIn(h.valuePtr(e, p, c), bytesAt(unsafe.Add(value, uintptr(c)*h.valStride), h.valStride))
		}
		return
	}
	if !h.percpu {
		memmove(unsafe.Add(p, h.valOff), value, vs)
		return
	}
	memmove(h.valuePtr(e, p, cpu), value, vs)
	if isNew {
		for c := range h.ncpu {
			if c != cpu {
				memclr(h.valuePtr(e, p, c), vs)
			}
		}
	}
}

func (h *hashMap) readValue(e uint32, p unsafe.Pointer, out []byte) {
	for c := range h.ncpu {
		atomicCopyOut(out[uintptr(c)*h.valStride:], h.valuePtr(e, p, c), h.valStride)
	}
}

// insertLocked fills element e and links it at the head of bucket b.
func (h *hashMap) insertLocked(b, tag, e uint32, key, value unsafe.Pointer, cpu int) {
	p := h.elem(e)
	h.storeKey(p, key)
	h.writeValue(e, p, value, cpu, true)
	if h.lru {
		atomic.StoreUint32(lruState(p), lruLive)
	}
	atomic.StoreUint32(tagPtr(p), tag)
	atomic.StoreUint32(nextPtr(p), atomic.LoadUint32(&h.buckets[b]))
	atomic.StoreUint32(&h.buckets[b], e)
}

func (h *hashMap) LookupElem(key unsafe.Pointer, cpu int) unsafe.Pointer {
	var e uint32
	var p unsafe.Pointer
	if h.keySize == 8 {
		e, p = h.lookup8(key)
	} else {
		e, p = h.lookup(key)
	}
	if p == nil {
		return nil
	}
	if h.lru {
		lruTouch(p)
	}
	if !h.percpu {
		return unsafe.Add(p, h.valOff)
	}
	if uint(cpu) >= uint(h.ncpu) {
		return nil
	}
	return h.valuePtr(e, p, cpu)
}

func (h *hashMap) UpdateElem(key, value unsafe.Pointer, flags uint64, cpu int) error {
	if !h.percpu {
		cpu = 0 // ignored; never the Go side's allCPUs
	} else if uint(cpu) >= uint(h.ncpu) {
		return h.errs.invalid
	}
	return h.update(key, value, flags, cpu)
}

func (h *hashMap) update(key, value unsafe.Pointer, flags uint64, cpu int) error {
	if flags > uint64(UpdateExist) {
		return h.errs.invalid // includes BPF_F_LOCK: no value has a bpf_spin_lock
	}
	b, tag := h.hashOf(key)
	mu := h.lock(b)
	mu.Lock()
	if e, p, _ := h.findLocked(b, tag, key); p != nil {
		if flags == uint64(UpdateNoExist) {
			mu.Unlock()
			return h.errs.exist
		}
		h.writeValue(e, p, value, cpu, false)
		if h.lru {
			lruTouch(p)
		}
		mu.Unlock()
		return nil
	}
	if flags == uint64(UpdateExist) {
		mu.Unlock()
		return h.errs.notExist
	}
	if !h.lru {
		e, ok := h.alloc()
		if !ok {
			mu.Unlock()
			return h.errs.full
		}
		h.insertLocked(b, tag, e, key, value, cpu)
		mu.Unlock()
		return nil
	}
	// LRU: find a slot (maybe evicting, which locks the victim's bucket)
	// without holding our bucket lock, then check again.
	mu.Unlock()
	e, err := h.lruAlloc()
	if err != nil {
		return err
	}
	mu.Lock()
	if old, p, _ := h.findLocked(b, tag, key); p != nil {
		err = h.errs.exist
		if flags != uint64(UpdateNoExist) {
			h.writeValue(old, p, value, cpu, false)
			lruTouch(p)
			err = nil
		}
		mu.Unlock()
		h.freeElem(e)
		return err
	}
	h.insertLocked(b, tag, e, key, value, cpu)
	mu.Unlock()
	return nil
}

func (h *hashMap) DeleteElem(key unsafe.Pointer) error {
	return h.delete(key, nil)
}

// delete removes key; if out is not nil it first receives the value.
func (h *hashMap) delete(key unsafe.Pointer, out []byte) error {
	b, tag := h.hashOf(key)
	mu := h.lock(b)
	mu.Lock()
	e, p, prev := h.findLocked(b, tag, key)
	if p == nil {
		mu.Unlock()
		return h.errs.notExist
	}
	if out != nil {
		h.readValue(e, p, out)
	}
	atomic.StoreUint32(prev, atomic.LoadUint32(nextPtr(p)))
	if h.lru {
		atomic.StoreUint32(lruState(p), 0)
	}
	mu.Unlock()
	h.freeElem(e)
	return nil
}
