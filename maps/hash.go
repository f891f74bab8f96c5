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
// Layout. An open-addressed table with linear probing whose slots are the
// elements themselves, so that a lookup usually reads one cache line, which
// also holds the value the program reads next (a chained table costs two
// dependent misses: the bucket, then the element). A slot is
//
//	[ctrl u64]([lru state u32][pad u32])[key, padded to 8][value, padded to 8]
//
// where per-CPU maps keep their values out of line, in one cache-line
// aligned region per CPU at the end of each chunk. Slots live in slabs
// ("chunks") of []uint64 owned by the map and are named by a 32-bit index.
// A table of up to sparseMaxBytes has twice as many slots as MaxEntries,
// rounded up to a power of two, so at most half are live and probes are
// short. A larger one has a third more slots than MaxEntries (at most three
// quarters live): there a sparser table costs cache and TLB footprint,
// which a lookup in a large map pays in misses. A key's home slot is the
// high half of its hash scaled to the slot count.
//
// ctrl is
//
//	tag (24 bits of the hash) | state (2) | dist (8) | homeDist (8) | generation (22)
//
// A slot goes empty → busy → live → tombstone → busy → live ...; it never
// becomes empty again, so a key sits after a run of non-empty slots from its
// home slot and lookups stop at the first empty slot. dist is the live
// element's distance from its home slot; homeDist, kept in the home slot's
// ctrl, bounds the dist of every live element whose home this slot is, so a
// lookup probes at most homeDist+1 slots even through a run of tombstones.
// An insert raises homeDist before it publishes; a delete lowers it to what
// the remaining elements of that home need (it holds their lock, so none
// is being inserted). Distances of 255 and more saturate, and lookups then
// fall back to maxDisp, the longest probe any insert made. An element never
// moves: a value pointer keeps addressing the live value, and after a
// delete, memory that a later insert may reuse (like the kernel's
// preallocated hash maps).
//
// Concurrency. Lookups take no lock: they read ctrl, compare the key (atomic
// loads) and read ctrl again; a changed ctrl (the slot was deleted or
// reused meanwhile: the generation moved; or its homeDist changed) means the
// key they compared may be torn, and they look again. Every change of ctrl
// is a compare-and-swap that keeps the fields it does not own. Writers (update, delete) lock the stripe of
// the key's home slot, so one key has one writer at a time; inserts of
// different keys claim free slots with a compare-and-swap of ctrl, write
// key and value, and publish the element with a store of ctrl. The number
// of elements is reserved before a slot is claimed, so a free slot always
// exists.
type hashMap struct {
	base
	lru, percpu bool

	keySize  uintptr
	keyOff   uintptr // offset of the key in a slot
	valOff   uintptr // offset of the inline value (not per-CPU)
	elemSize uintptr

	chunkShift      uint
	chunkMask       uint32
	chunkSize       uintptr // bytes
	cpuRegionOff    uintptr // per-CPU: start of CPU 0's value region in a chunk
	cpuRegionStride uintptr // per-CPU: distance between CPU regions
	chunks          []unsafe.Pointer
	flat            unsafe.Pointer // all slots in one block (not per-CPU, preallocated): slot e at flat+e*elemSize
	keep            [][]uint64
	allocMu         sync.Mutex

	nslots   uint32
	pow2     bool // nslots is a power of two
	locks    []stripeLock
	lockMask uint32
	seed     uint64
	// smallStart is where hashes of keys of at most 8 bytes start
	// (hashSmall), so that they cost no multiplication.
	smallStart uint64

	count   atomic.Uint32 // elements, live or being inserted
	maxDisp atomic.Uint32 // the longest probe (in slots past home) of any insert
	clock   atomic.Uint32 // LRU clock hand
}

// Slot states and the fields of ctrl.
const (
	stEmpty = 0
	stBusy  = 1
	stLive  = 2
	stTomb  = 3

	tagMask       = 1<<24 - 1
	stateShift    = 24
	stateMask     = 3 << stateShift
	distShift     = 26
	distMask      = 0xff << distShift
	homeDistShift = 34
	homeDistMask  = 0xff << homeDistShift
	genShift      = 42
	maxDist       = 0xff // saturated: see maxDisp
)

func slotState(c uint64) uint64 { return c >> stateShift & 3 }
func slotDist(c uint64) uint32  { return uint32(c>>distShift) & maxDist }
func homeDist(c uint64) uint32  { return uint32(c>>homeDistShift) & maxDist }

// probeLimit is how many slots after home a lookup must look at, from the
// home slot's ctrl.
func (h *hashMap) probeLimit(c uint64) uint32 {
	if d := homeDist(c); d < maxDist {
		return d
	}
	return h.maxDisp.Load()
}

const (
	allCPUs = -1 // cpu argument of the Go side: value has every CPU's slot

	maxEagerPrealloc = 256 << 20 // larger maps allocate their slabs on demand
	targetChunkBytes = 256 << 10
	sparseMaxBytes   = 4 << 20 // tables up to this size get 2× slots, not 4/3
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
		// Small slots get a power-of-two size so that none straddles two
		// cache lines.
		h.elemSize = uintptr(1) << bits.Len64(uint64(h.elemSize-1))
	}
	perElem := h.elemSize
	if h.percpu {
		perElem += uintptr(h.ncpu) * h.valStride
	}
	// Validation caps MaxEntries at 1<<28, so these fit in 32 bits.
	h.nslots = spec.MaxEntries + spec.MaxEntries/3 + 1
	if sparse := uint64(1) << bits.Len64(2*uint64(spec.MaxEntries)-1); sparse*uint64(perElem) <= sparseMaxBytes {
		// Memory is cheap here: at most half the slots are live, so
		// probes are shorter (inserts, deletes and misses most of all),
		// and a power of two lets the LRU hand mask instead of divide.
		h.nslots = uint32(sparse)
		h.pow2 = true
	}
	nslots := uintptr(h.nslots)
	// A chunk holds the largest power of two of slots that fits in
	// targetChunkBytes (at least one).
	if perElem < targetChunkBytes {
		h.chunkShift = min(uint(bits.Len64(uint64(targetChunkBytes/perElem)))-1, uint(bits.Len32(h.nslots-1)))
	}
	chunkLen := uintptr(1) << h.chunkShift
	h.chunkMask = uint32(chunkLen - 1)
	h.chunkSize = chunkLen * h.elemSize
	if h.percpu {
		h.cpuRegionOff = roundCacheLine(h.chunkSize)
		h.cpuRegionStride = roundCacheLine(chunkLen * h.valStride)
		h.chunkSize = h.cpuRegionOff + uintptr(h.ncpu)*h.cpuRegionStride
	}
	nchunks := (nslots + chunkLen - 1) >> h.chunkShift
	h.chunks = make([]unsafe.Pointer, nchunks)
	h.keep = make([][]uint64, nchunks)

	nl := uint32(maxLocks)
	for nl > 1 && nl > h.nslots {
		nl >>= 1
	}
	h.locks = make([]stripeLock, nl)
	h.lockMask = nl - 1
	if spec.Flags&FlagZeroSeed == 0 {
		h.seed = randomSeed()
	}
	h.smallStart = smallStart(h.keySize, h.seed)
	if total := uint64(nchunks) * uint64(h.chunkSize); spec.Flags&FlagNoPrealloc == 0 && total <= maxEagerPrealloc {
		var slab unsafe.Pointer
		if total >= hugeSlabMin {
			// One mapping with huge pages, unmapped when the map is
			// garbage: whoever runs a program keeps its maps reachable.
			slab = allocHugeSlab(h, uintptr(total))
		}
		if slab == nil {
			h.keep[0] = allocWords(uintptr(total))
			slab = unsafe.Pointer(&h.keep[0][0])
		}
		for c := range nchunks {
			h.chunks[c] = unsafe.Add(slab, c*h.chunkSize)
		}
		if !h.percpu {
			// Chunks follow each other without CPU regions between
			// them: lookups skip the chunk table.
			h.flat = slab
		}
	}
	return h, nil
}

// slot returns the address of slot e, or nil if its chunk was never
// allocated (then every slot in it is empty).
func (h *hashMap) slot(e uint32) unsafe.Pointer {
	if h.flat != nil {
		return unsafe.Add(h.flat, uintptr(e)*h.elemSize)
	}
	c := atomic.LoadPointer(&h.chunks[e>>h.chunkShift])
	if c == nil {
		return nil
	}
	return unsafe.Add(c, uintptr(e&h.chunkMask)*h.elemSize)
}

// next is the slot after e, wrapping around.
func (h *hashMap) next(e uint32) uint32 {
	if e++; e == h.nslots {
		return 0
	}
	return e
}

// offset is the slot d after e (d < nslots), wrapping around.
func (h *hashMap) offset(e, d uint32) uint32 {
	if e += d; e >= h.nslots || e < d {
		e -= h.nslots
	}
	return e
}

// back is the slot d before e (d < nslots), wrapping around.
func (h *hashMap) back(e, d uint32) uint32 {
	if e >= d {
		return e - d
	}
	return e + h.nslots - d
}

func ctrlPtr(p unsafe.Pointer) *uint64 { return (*uint64)(p) }

// valuePtr returns the value of slot e (at p) for cpu.
func (h *hashMap) valuePtr(e uint32, p unsafe.Pointer, cpu int) unsafe.Pointer {
	if !h.percpu {
		return unsafe.Add(p, h.valOff)
	}
	c := atomic.LoadPointer(&h.chunks[e>>h.chunkShift])
	return unsafe.Add(c, h.cpuRegionOff+uintptr(cpu)*h.cpuRegionStride+uintptr(e&h.chunkMask)*h.valStride)
}

// hashOf returns the home slot and the tag of key.
func (h *hashMap) hashOf(key unsafe.Pointer) (home, tag uint32) {
	_, home, tag = h.keyHash(key)
	return home, tag
}

// keyHash returns the home slot and the tag of key and, for keys of at
// most 8 bytes, the key as the zero-padded word the slot stores (see
// findKey).
func (h *hashMap) keyHash(key unsafe.Pointer) (k uint64, home, tag uint32) {
	var hv uint64
	if h.keySize <= 8 {
		k = loadPartial(key, h.keySize)
		hv = hashSmallFrom(k, h.smallStart)
	} else {
		hv = hashKey(key, h.keySize, h.seed)
	}
	return k, h.homeOf(hv), uint32(hv) & tagMask
}

// findKey is find without the ctrl word, for the results of keyHash: keys
// of at most 8 bytes are compared as one word.
func (h *hashMap) findKey(k uint64, home, tag uint32, key unsafe.Pointer) (uint32, unsafe.Pointer) {
	if h.keySize <= 8 {
		return h.findSmall(k, home, tag)
	}
	e, p, _ := h.find(home, tag, key)
	return e, p
}

// homeOf is the home slot of a key with hash hv.
func (h *hashMap) homeOf(hv uint64) uint32 {
	return uint32(hv >> 32 * uint64(h.nslots) >> 32)
}

func (h *hashMap) lock(home uint32) *stripeLock { return &h.locks[home&h.lockMask] }

// keyEq compares the key stored in the slot at p with the caller's key.
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

// find looks key up without locking and returns its slot's index, address
// and ctrl word (nil if key is not in the map). Under the key's lock, the
// result stays true until the caller changes it.
func (h *hashMap) find(home, tag uint32, key unsafe.Pointer) (uint32, unsafe.Pointer, uint64) {
	hp := h.slot(home)
	if hp == nil {
		return 0, nil, 0
	}
	limit := h.probeLimit(atomic.LoadUint64(ctrlPtr(hp)))
	e := home
	for d := uint32(0); d <= limit; d++ {
		p := h.slot(e)
		if p == nil {
			return 0, nil, 0
		}
		for {
			c := atomic.LoadUint64(ctrlPtr(p))
			st := slotState(c)
			if st == stEmpty {
				return 0, nil, 0
			}
			if st != stLive || uint32(c)&tagMask != tag || !h.keyEq(p, key) {
				break
			}
			if atomic.LoadUint64(ctrlPtr(p)) == c {
				return e, p, c
			}
			// The slot changed while we compared: look again.
		}
		e = h.next(e)
	}
	return 0, nil, 0
}

// lookupSmall is find for keys of at most 8 bytes, the most common sizes
// (u64 ids, pid_tgid, u32 ids), hashing included: the key is one word.
func (h *hashMap) lookupSmall(key unsafe.Pointer) (uint32, unsafe.Pointer) {
	var k uint64
	if h.keySize == 8 {
		k = *(*uint64)(key)
	} else {
		k = loadPartial(key, h.keySize)
	}
	hv := hashSmallFrom(k, h.smallStart)
	// findSmall written out: lookups are the hottest path of all.
	e := h.homeOf(hv)
	p := h.slot(e)
	if p == nil {
		return 0, nil
	}
	want := uint64(uint32(hv)&tagMask) | stLive<<stateShift
	c := atomic.LoadUint64(ctrlPtr(p))
	if c&(tagMask|stateMask) == want && loadWordAtomic(unsafe.Add(p, h.keyOff)) == k && atomic.LoadUint64(ctrlPtr(p)) == c {
		return e, p
	}
	return h.lookupWordProbe(k, want, e, p)
}

// findSmall is find for a key of at most 8 bytes, k, with home slot e and
// tag.
func (h *hashMap) findSmall(k uint64, e, tag uint32) (uint32, unsafe.Pointer) {
	p := h.slot(e)
	if p == nil {
		return 0, nil
	}
	want := uint64(tag) | stLive<<stateShift
	c := atomic.LoadUint64(ctrlPtr(p))
	// Most keys sit in their home slot (at most half the slots of a small
	// table are live): check it before working out the probe bound.
	if c&(tagMask|stateMask) == want && loadWordAtomic(unsafe.Add(p, h.keyOff)) == k && atomic.LoadUint64(ctrlPtr(p)) == c {
		return e, p
	}
	return h.lookupWordProbe(k, want, e, p)
}

// lookupWordProbe is findSmall from the home slot e (at p) on.
func (h *hashMap) lookupWordProbe(k, want uint64, e uint32, p unsafe.Pointer) (uint32, unsafe.Pointer) {
	c := atomic.LoadUint64(ctrlPtr(p))
	limit := h.probeLimit(c)
	for d := uint32(0); ; {
		if c&(tagMask|stateMask) == want && loadWordAtomic(unsafe.Add(p, h.keyOff)) == k {
			if atomic.LoadUint64(ctrlPtr(p)) == c {
				return e, p
			}
			c = atomic.LoadUint64(ctrlPtr(p)) // changed while we compared: again
			continue
		}
		if slotState(c) == stEmpty {
			return 0, nil
		}
		if d++; d > limit {
			return 0, nil
		}
		e = h.next(e)
		if p = h.slot(e); p == nil {
			return 0, nil
		}
		c = atomic.LoadUint64(ctrlPtr(p))
	}
}

// writeValue stores a value into slot e. cpu >= 0 is the program side:
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

// insertLocked stores key and value in a free slot from home on. The
// caller holds the key's lock, knows the key is absent and has reserved
// the element (count).
// An LRU element inserted after an eviction gets a grace period (lru.go).
func (h *hashMap) insertLocked(home, tag uint32, key, value unsafe.Pointer, cpu int, grace bool) {
	e, p, _, d := h.claim(home)
	h.storeKey(p, key)
	h.writeValue(e, p, value, cpu, true)
	if h.lru {
		if grace {
			lruInit(p, lruLive|lruGrace, h.clock.Load()+h.nslots)
		} else {
			lruInit(p, lruLive, 0)
		}
	}
	// Lookups must probe this far before they can see the element.
	for {
		m := h.maxDisp.Load()
		if d <= m || h.maxDisp.CompareAndSwap(m, d) {
			break
		}
	}
	dist := uint64(min(d, maxDist))
	hp := h.slot(home)
	for {
		c := atomic.LoadUint64(ctrlPtr(hp))
		if uint64(homeDist(c)) >= dist || atomic.CompareAndSwapUint64(ctrlPtr(hp), c, c&^homeDistMask|dist<<homeDistShift) {
			break
		}
	}
	// Publish. Only homeDist may have changed since the claim (when this
	// slot is someone's home).
	for {
		c := atomic.LoadUint64(ctrlPtr(p))
		live := c&^(tagMask|stateMask|distMask) | uint64(tag) | stLive<<stateShift | dist<<distShift
		if atomic.CompareAndSwapUint64(ctrlPtr(p), c, live) {
			break
		}
	}
}

// removeLocked turns the live slot e (at p) into a tombstone and lowers
// its home's homeDist to what the home's other elements need. The caller
// holds the key's lock, which is also the lock of every key with the same
// home, and releases the element's count (an eviction hands it on to the
// insert that evicted). The LRU state word is left as it is: the hand
// skips slots that are not live, and an insert rewrites it.
func (h *hashMap) removeLocked(e uint32, p unsafe.Pointer) {
	var c uint64
	for {
		c = atomic.LoadUint64(ctrlPtr(p))
		if atomic.CompareAndSwapUint64(ctrlPtr(p), c, c&^stateMask|stTomb<<stateShift) {
			break
		}
	}
	dist := slotDist(c)
	if dist == 0 || dist == maxDist {
		return // nothing to lower, or saturated: homeDist stays
	}
	home := h.back(e, dist)
	hp := h.slot(home)
	for {
		hc := atomic.LoadUint64(ctrlPtr(hp))
		limit := homeDist(hc)
		if limit == maxDist || limit > dist {
			return // an element further away, or saturated
		}
		// The farthest remaining element of this home.
		need := uint32(0)
		for d := limit; d > 0; d-- {
			sc := atomic.LoadUint64(ctrlPtr(h.slot(h.offset(home, d))))
			if slotState(sc) == stLive && slotDist(sc) == d {
				need = d
				break
			}
		}
		if atomic.CompareAndSwapUint64(ctrlPtr(hp), hc, hc&^homeDistMask|uint64(need)<<homeDistShift) {
			return
		}
	}
}

func (h *hashMap) LookupElem(key unsafe.Pointer, cpu int) unsafe.Pointer {
	var e uint32
	var p unsafe.Pointer
	if h.keySize <= 8 {
		e, p = h.lookupSmall(key)
	} else {
		home, tag := h.hashOf(key)
		e, p, _ = h.find(home, tag, key)
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
	// Hashing and finding the key are written out here: this is the
	// path of every program-side update, and the calls were measurable.
	var k, hv uint64
	if h.keySize <= 8 {
		k = loadPartial(key, h.keySize)
		hv = hashSmallFrom(k, h.smallStart)
	} else {
		hv = hashKey(key, h.keySize, h.seed)
	}
	home, tag := h.homeOf(hv), uint32(hv)&tagMask
	mu := h.lock(home)
	mu.Lock()
	var e uint32
	var p unsafe.Pointer
	if h.keySize <= 8 {
		e, p = h.findSmall(k, home, tag)
	} else {
		e, p, _ = h.find(home, tag, key)
	}
	if p != nil {
		if flags == uint64(UpdateNoExist) {
			mu.Unlock()
			return h.errs.exist
		}
		if !h.percpu && cpu != allCPUs {
			memmove(unsafe.Add(p, h.valOff), value, uintptr(h.spec.ValueSize))
		} else {
			h.writeValue(e, p, value, cpu, false)
		}
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
		if !h.reserve() {
			mu.Unlock()
			return h.errs.full
		}
		h.insertLocked(home, tag, key, value, cpu, false)
		mu.Unlock()
		return nil
	}
	// LRU: make room, keeping our lock while the hand only try-locks its
	// victims' homes. If one is busy, make room without our lock (maybe
	// waiting for the victim's), then check again under it.
	evicted, err := h.lruReserve(mu)
	if err == nil {
		h.insertLocked(home, tag, key, value, cpu, evicted)
		mu.Unlock()
		return nil
	}
	mu.Unlock()
	if evicted, err = h.lruReserve(nil); err != nil {
		return err
	}
	mu.Lock()
	if e, p := h.findKey(k, home, tag, key); p != nil {
		err = h.errs.exist
		if flags != uint64(UpdateNoExist) {
			h.writeValue(e, p, value, cpu, false)
			lruTouch(p)
			err = nil
		}
		mu.Unlock()
		h.count.Add(^uint32(0)) // the reservation is not needed
		return err
	}
	h.insertLocked(home, tag, key, value, cpu, evicted)
	mu.Unlock()
	return nil
}

func (h *hashMap) DeleteElem(key unsafe.Pointer) error {
	return h.delete(key, nil)
}

// delete removes key; if out is not nil it first receives the value.
func (h *hashMap) delete(key unsafe.Pointer, out []byte) error {
	k, home, tag := h.keyHash(key)
	mu := h.lock(home)
	mu.Lock()
	e, p := h.findKey(k, home, tag, key)
	if p == nil {
		mu.Unlock()
		return h.errs.notExist
	}
	if out != nil {
		h.readValue(e, p, out)
	}
	h.removeLocked(e, p)
	mu.Unlock()
	h.count.Add(^uint32(0))
	return nil
}
