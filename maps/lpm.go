package maps

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// lpmTrie is BPF_MAP_TYPE_LPM_TRIE, the kernel's path-compressed binary trie
// (kernel/bpf/lpm_trie.c) with the same semantics:
//
//   - a key is struct { u32 prefixlen; u8 data[KeySize-4] }, prefixlen in
//     host byte order, data in network byte order (most significant bit
//     first);
//   - lookups return the value of the longest stored prefix that matches
//     the key's data on at most the key's prefixlen bits;
//   - updates and deletes address an exact prefix; the map is full at
//     MaxEntries prefixes (ENOSPC, matching ErrMapFull); intermediate nodes
//     created for branching do not count.
//
// Nodes live in slabs owned by the trie, named by 32-bit index:
//
//	[prefixlen u32][flags u32][child0 u32][child1 u32][data, padded to 8][value, padded to 8]
//
// Concurrency: writers hold a mutex. Lookups take no lock: they read nodes
// with atomic loads under a sequence counter that writers make odd while
// they change the trie's shape, and retry (eventually falling back to the
// mutex) if it changed. Value updates of an existing prefix are done in
// place. Deleted nodes are recycled for later inserts, never freed.
type lpmTrie struct {
	base
	mu   sync.Mutex
	seq  atomic.Uint64
	root atomic.Uint32

	dataSize   uintptr
	dataStride uintptr
	maxPrefix  uint32
	nodeSize   uintptr

	chunkShift uint
	chunkMask  uint32
	chunks     []unsafe.Pointer
	keep       [][]uint64

	nodes    uint32   // slots handed out (under mu)
	free     []uint32 // recycled slots (under mu)
	nEntries uint32   // real (non-intermediate) nodes (under mu)
}

const (
	nilNode   = ^uint32(0)
	lpmIMFlag = 1 // LPM_TREE_NODE_FLAG_IM: intermediate node without value
	lpmDataOf = 16
)

func newLPMTrie(spec *Spec) *lpmTrie {
	t := &lpmTrie{dataSize: uintptr(spec.KeySize) - 4}
	t.init(spec, t, 1)
	t.dataStride = round8(t.dataSize)
	t.maxPrefix = uint32(t.dataSize * 8)
	t.nodeSize = lpmDataOf + t.dataStride + t.valStride
	maxNodes := 2*uint64(spec.MaxEntries) - 1
	t.chunkShift = uint(min(bits.Len64(uint64(targetChunkBytes/t.nodeSize)), bits.Len64(maxNodes))) - 1
	if targetChunkBytes < t.nodeSize {
		t.chunkShift = 0
	}
	chunkLen := uint64(1) << t.chunkShift
	t.chunkMask = uint32(chunkLen - 1)
	nchunks := (maxNodes + chunkLen - 1) / chunkLen
	t.chunks = make([]unsafe.Pointer, nchunks)
	t.keep = make([][]uint64, nchunks)
	t.root.Store(nilNode)
	return t
}

func (t *lpmTrie) node(n uint32) unsafe.Pointer {
	c := atomic.LoadPointer(&t.chunks[n>>t.chunkShift])
	return unsafe.Add(c, uintptr(n&t.chunkMask)*t.nodeSize)
}

func nPrefix(p unsafe.Pointer) *uint32            { return (*uint32)(p) }
func nFlags(p unsafe.Pointer) *uint32             { return (*uint32)(unsafe.Add(p, 4)) }
func nChild(p unsafe.Pointer, bit uint32) *uint32 { return (*uint32)(unsafe.Add(p, 8+4*uintptr(bit))) }
func (t *lpmTrie) nValue(p unsafe.Pointer) unsafe.Pointer {
	return unsafe.Add(p, lpmDataOf+t.dataStride)
}

// be turns a word loaded from memory into the big-endian reading of its
// bytes, so that bit 63 is the first bit of the first byte.
func be(w uint64) uint64 {
	if littleEndian {
		return bits.ReverseBytes64(w)
	}
	return w
}

// matchLen is longest_prefix_match: the number of leading bits node p and
// the key agree on, at most min(p's prefixlen, the key's prefixlen).
func (t *lpmTrie) matchLen(p unsafe.Pointer, plen uint32, key unsafe.Pointer, klen uint32) uint32 {
	limit := min(plen, klen)
	kd := unsafe.Add(key, 4)
	var matched uint32
	for off := uintptr(0); off < t.dataSize && matched < limit; off += 8 {
		a := be(loadWordAtomic(unsafe.Add(p, lpmDataOf+off)))
		b := be(loadPartial(unsafe.Add(kd, off), min(8, t.dataSize-off)))
		if x := a ^ b; x != 0 {
			matched += uint32(bits.LeadingZeros64(x))
			break
		}
		matched += 64
	}
	return min(matched, limit)
}

// keyBit is extract_bit on the key's data.
func keyBit(key unsafe.Pointer, i uint32) uint32 {
	b := *(*byte)(unsafe.Add(key, 4+uintptr(i/8)))
	return uint32(b>>(7-i%8)) & 1
}

func (t *lpmTrie) nodeBit(p unsafe.Pointer, i uint32) uint32 {
	w := be(loadWordAtomic(unsafe.Add(p, lpmDataOf+uintptr(i/64)*8)))
	return uint32(w>>(63-i%64)) & 1
}

// walk is trie_lookup_elem. It returns the best node or nilNode; ok is false
// if the walk went astray (more steps than a consistent trie allows).
func (t *lpmTrie) walk(key unsafe.Pointer, klen uint32) (found uint32, ok bool) {
	found = nilNode
	n := t.root.Load()
	for steps := uint32(0); n != nilNode; steps++ {
		if steps > t.maxPrefix+1 {
			return nilNode, false
		}
		p := t.node(n)
		plen := atomic.LoadUint32(nPrefix(p))
		m := t.matchLen(p, plen, key, klen)
		if m == t.maxPrefix {
			return n, true
		}
		if m < plen {
			break
		}
		if atomic.LoadUint32(nFlags(p))&lpmIMFlag == 0 {
			found = n
		}
		n = atomic.LoadUint32(nChild(p, keyBit(key, plen)))
	}
	return found, true
}

func (t *lpmTrie) lookup(key unsafe.Pointer) uint32 {
	klen := *(*uint32)(key)
	if klen > t.maxPrefix {
		return nilNode
	}
	for range 16 {
		s := t.seq.Load()
		if s&1 != 0 {
			continue
		}
		found, ok := t.walk(key, klen)
		if ok && t.seq.Load() == s {
			return found
		}
	}
	t.mu.Lock()
	found, _ := t.walk(key, klen)
	t.mu.Unlock()
	return found
}

func (t *lpmTrie) LookupElem(key unsafe.Pointer, _ int) unsafe.Pointer {
	n := t.lookup(key)
	if n == nilNode {
		return nil
	}
	return t.nValue(t.node(n))
}

// allocNode takes a node slot (under mu) and fills it; value may be nil
// (intermediate node), goSide selects atomic value stores.
func (t *lpmTrie) allocNode(key, value unsafe.Pointer, plen uint32, goSide bool) (uint32, unsafe.Pointer) {
	var n uint32
	if k := len(t.free); k > 0 {
		n = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		n = t.nodes
		t.nodes++
		if c := n >> t.chunkShift; t.chunks[c] == nil {
			t.keep[c] = allocWords(uintptr(t.chunkMask+1) * t.nodeSize)
			atomic.StorePointer(&t.chunks[c], unsafe.Pointer(&t.keep[c][0]))
		}
	}
	p := t.node(n)
	atomic.StoreUint32(nPrefix(p), plen)
	atomic.StoreUint32(nFlags(p), 0)
	atomic.StoreUint32(nChild(p, 0), nilNode)
	atomic.StoreUint32(nChild(p, 1), nilNode)
	t.storeData(p, unsafe.Add(key, 4))
	if value != nil {
		t.writeValue(p, value, goSide)
	}
	return n, p
}

func (t *lpmTrie) storeData(p, data unsafe.Pointer) {
	for off := uintptr(0); off < t.dataSize; off += 8 {
		storePartialAtomic(unsafe.Add(p, lpmDataOf+off), unsafe.Add(data, off), min(8, t.dataSize-off))
	}
}

func (t *lpmTrie) writeValue(p, value unsafe.Pointer, goSide bool) {
	if goSide {
		atomicCopyIn(t.nValue(p), bytesAt(value, t.valStride))
	} else {
		memmove(t.nValue(p), value, uintptr(t.spec.ValueSize))
	}
}

func (t *lpmTrie) beginWrite() { t.seq.Add(1) }
func (t *lpmTrie) endWrite()   { t.seq.Add(1) }

func (t *lpmTrie) UpdateElem(key, value unsafe.Pointer, flags uint64, _ int) error {
	return t.update(key, value, flags, false)
}

// update is trie_update_elem.
func (t *lpmTrie) update(key, value unsafe.Pointer, flags uint64, goSide bool) error {
	if flags > uint64(UpdateExist) {
		return t.errs.invalid
	}
	klen := *(*uint32)(key)
	if klen > t.maxPrefix {
		return t.errs.invalid
	}
	t.mu.Lock()
	defer t.mu.Unlock()

	slot := (*uint32)(unsafe.Pointer(&t.root))
	var (
		n    uint32
		p    unsafe.Pointer
		plen uint32
		m    uint32
	)
	for {
		n = atomic.LoadUint32(slot)
		if n == nilNode {
			break
		}
		p = t.node(n)
		plen = atomic.LoadUint32(nPrefix(p))
		m = t.matchLen(p, plen, key, klen)
		if plen != m || plen == klen || plen == t.maxPrefix {
			break
		}
		slot = nChild(p, keyBit(key, plen))
	}

	isIM := n != nilNode && plen == m && atomic.LoadUint32(nFlags(p))&lpmIMFlag != 0
	if n != nilNode && plen == m && !isIM { // exact prefix present
		if flags == uint64(UpdateNoExist) {
			return t.errs.exist
		}
		t.writeValue(p, value, goSide)
		return nil
	}
	if flags == uint64(UpdateExist) {
		return t.errs.notExist
	}
	if t.nEntries == t.spec.MaxEntries {
		return t.errs.trieFull
	}
	t.nEntries++

	switch {
	case n == nilNode: // empty slot
		nn, _ := t.allocNode(key, value, klen, goSide)
		t.beginWrite()
		atomic.StoreUint32(slot, nn)
		t.endWrite()
	case isIM: // an intermediate node with this prefix becomes real
		t.writeValue(p, value, goSide)
		t.beginWrite()
		t.storeData(p, unsafe.Add(key, 4))
		atomic.StoreUint32(nFlags(p), 0)
		t.endWrite()
	case m == klen: // the new prefix is an ancestor of n
		nn, np := t.allocNode(key, value, klen, goSide)
		atomic.StoreUint32(nChild(np, t.nodeBit(p, m)), n)
		t.beginWrite()
		atomic.StoreUint32(slot, nn)
		t.endWrite()
	default: // branch: an intermediate node of prefixlen m above both
		nn, _ := t.allocNode(key, value, klen, goSide)
		im, ip := t.allocNode(unsafe.Add(p, lpmDataOf-4), nil, m, goSide)
		atomic.StoreUint32(nFlags(ip), lpmIMFlag)
		if keyBit(key, m) == 1 {
			atomic.StoreUint32(nChild(ip, 0), n)
			atomic.StoreUint32(nChild(ip, 1), nn)
		} else {
			atomic.StoreUint32(nChild(ip, 0), nn)
			atomic.StoreUint32(nChild(ip, 1), n)
		}
		t.beginWrite()
		atomic.StoreUint32(slot, im)
		t.endWrite()
	}
	return nil
}

func (t *lpmTrie) DeleteElem(key unsafe.Pointer) error {
	return t.delete(key)
}

// delete is trie_delete_elem.
func (t *lpmTrie) delete(key unsafe.Pointer) error {
	klen := *(*uint32)(key)
	if klen > t.maxPrefix {
		return t.errs.invalid
	}
	t.mu.Lock()
	defer t.mu.Unlock()

	trim := (*uint32)(unsafe.Pointer(&t.root))
	trim2 := trim
	parent := nilNode
	var (
		n       uint32
		p       unsafe.Pointer
		plen, m uint32
	)
	for {
		n = atomic.LoadUint32(trim)
		if n == nilNode {
			break
		}
		p = t.node(n)
		plen = atomic.LoadUint32(nPrefix(p))
		m = t.matchLen(p, plen, key, klen)
		if plen != m || plen == klen {
			break
		}
		parent, trim2 = n, trim
		trim = nChild(p, keyBit(key, plen))
	}
	if n == nilNode || plen != klen || plen != m || atomic.LoadUint32(nFlags(p))&lpmIMFlag != 0 {
		return t.errs.notExist
	}
	t.nEntries--
	c0, c1 := atomic.LoadUint32(nChild(p, 0)), atomic.LoadUint32(nChild(p, 1))

	t.beginWrite()
	defer t.endWrite()
	if c0 != nilNode && c1 != nilNode { // keep as an intermediate node
		atomic.StoreUint32(nFlags(p), lpmIMFlag)
		return nil
	}
	if parent != nilNode && c0 == nilNode && c1 == nilNode {
		pp := t.node(parent)
		if atomic.LoadUint32(nFlags(pp))&lpmIMFlag != 0 { // drop the parent too
			sibling := atomic.LoadUint32(nChild(pp, 0))
			if sibling == n {
				sibling = atomic.LoadUint32(nChild(pp, 1))
			}
			atomic.StoreUint32(trim2, sibling)
			t.free = append(t.free, n, parent)
			return nil
		}
	}
	switch {
	case c0 != nilNode:
		atomic.StoreUint32(trim, c0)
	case c1 != nilNode:
		atomic.StoreUint32(trim, c1)
	default:
		atomic.StoreUint32(trim, nilNode)
	}
	t.free = append(t.free, n)
	return nil
}
