package channel

import (
	"github.com/uebpf/uebpf/internal/order"

	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Options configure a new channel.
type Options struct {
	// Name names the memfds (for /proc/PID/fd and the like).
	Name string
	// Shards is the number of per-P rings (default GOMAXPROCS); writers on
	// any other P share one more ring, under a lock.
	Shards int
	// ShardSize is the size of each ring, rounded up to a power of two of
	// at least MinShardSize.
	ShardSize int
	// MetaSize is the capacity of the metadata area (default 64 KiB).
	MetaSize int
	Mode     Mode
	// BlockTimeout bounds a writer's wait in Block mode (0: 1 second;
	// negative: no bound).
	BlockTimeout time.Duration
	// File, if not nil, is a new empty file that backs the data (a
	// session that survives a crash of its process); it is resized and
	// mapped, and the channel closes it.
	File *os.File
	// PID, Procname and ClockOffset are written into the header for
	// consumers (this process's by default).
	PID         int
	Procname    string
	ClockOffset int64
	Created     uint64
}

// DefaultBlockTimeout is Options.BlockTimeout's default.
const DefaultBlockTimeout = time.Second

// Channel is the producer's side of a channel.
type Channel struct {
	mem    *memory
	shards []shard // the per-P ones, then the shared one
	nfast  int     // per-P shards
	maxRec uint64  // MaxRecord
	mode   Mode
	block  time.Duration
	hdr    unsafe.Pointer // the data file's start

	metaMu  sync.Mutex
	metaCap uint64
	metaLen uint64

	closed atomic.Bool
	// waiting counts in-process readers waiting for a record; wake gets
	// a token when a writer saw one.
	waiting atomic.Int32
	wake    chan struct{}
}

// shard is a ring's producer state, in this process's memory: nothing in
// shared memory is read back but the consumer position.
type shard struct {
	lock uint32 // the shared shard's spin lock
	idx  int
	// head is where the next record goes; cons the last valid consumer
	// position read (discard, block); tail the oldest record kept
	// (overwrite). limit is what head may reach without looking again.
	head, tail, cons, limit uint64
	size, mask              uint64
	data                    unsafe.Pointer
	line                    unsafe.Pointer // its line in the header
	consPos                 *uint64
	records                 uint64
	dropped                 uint64
	overwritten             uint64
	_                       [128 - 112]byte // a cache line of its own (and its neighbour's prefetch)
}

// sizes returns the number of per-P rings and the sizes of those and of
// the shared one, for shards rings asked for of shardSize bytes.
func sizes(shards, shardSize int) (n int, size, shared uint64) {
	n = shards
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	n = min(n, MaxShards-1)
	size = pow2(uint64(max(shardSize, MinShardSize)))
	// The shared ring, for Ps above the per-P ones, is small: it is only
	// used after GOMAXPROCS grew.
	return n, size, min(size, 64<<10)
}

// BufferSizeFor is the rings' total size of a channel of shards rings of
// shardSize bytes asked for (Channel.BufferSize, before it is made).
func BufferSizeFor(shards, shardSize int) int {
	n, size, shared := sizes(shards, shardSize)
	return int(uint64(n)*size + shared)
}

// New makes a channel.
func New(o Options) (*Channel, error) {
	n, size, sharedSize := sizes(o.Shards, o.ShardSize)
	if size > MaxShardSize {
		return nil, fmt.Errorf("channel: shards of %d bytes (at most %d)", o.ShardSize, MaxShardSize)
	}
	meta := roundPage(uint64(max(o.MetaSize, 64<<10)))
	if meta > MaxMetaSize {
		return nil, fmt.Errorf("channel: metadata area of %d bytes (at most %d)", o.MetaSize, MaxMetaSize)
	}
	if o.Mode > Block {
		return nil, fmt.Errorf("channel: %v", o.Mode)
	}
	total := n + 1
	hsize := headerSize(total)
	dataOff := hsize + meta
	fileSize := dataOff + uint64(n)*size + sharedSize
	mem, err := newMemory(o.Name, fileSize, positionsSize(total), o.File)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	c := &Channel{
		mem: mem, shards: make([]shard, total), nfast: n, mode: o.Mode, block: o.BlockTimeout,
		hdr: unsafe.Pointer(unsafe.SliceData(mem.data)), metaCap: meta, wake: make(chan struct{}, 1),
	}
	if c.block == 0 {
		c.block = DefaultBlockTimeout
	}
	h := mem.data
	copy(h[offMagic:], Magic)
	le := binary.LittleEndian
	le.PutUint32(h[offVersion:], Version)
	le.PutUint32(h[offMode:], uint32(o.Mode))
	le.PutUint32(h[offShards:], uint32(total))
	le.PutUint64(h[offShardSize:], size)
	le.PutUint64(h[offMetaOff:], hsize)
	le.PutUint64(h[offMetaCap:], meta)
	le.PutUint64(h[offDataOff:], dataOff)
	le.PutUint64(h[offSize:], fileSize)
	pid := o.PID
	if pid == 0 {
		pid = os.Getpid()
	}
	le.PutUint64(h[offPID:], uint64(pid))
	le.PutUint64(h[offClockOffset:], uint64(o.ClockOffset))
	le.PutUint64(h[offCreated:], o.Created)
	copy(h[offProcname:offProcname+15], o.Procname)
	off := dataOff
	for i := range c.shards {
		sh := &c.shards[i]
		sh.idx = i
		sh.size = size
		if i == n {
			sh.size = sharedSize
		}
		sh.mask = sh.size - 1
		sh.limit = sh.size
		sh.data = unsafe.Add(c.hdr, off)
		sh.line = unsafe.Add(c.hdr, headerFixed+uint64(i)*shardLine)
		sh.consPos = (*uint64)(unsafe.Pointer(&mem.pos[i*shardLine]))
		le.PutUint64(h[headerFixed+i*shardLine+lineOffset:], off)
		le.PutUint64(h[headerFixed+i*shardLine+lineSize:], sh.size)
		off += sh.size
	}
	c.maxRec = c.shards[n].size/4 - RecordHeaderSize
	// Memory a writer in flight may still touch after Close lives until
	// nothing reaches the channel.
	runtime.AddCleanup(c, func(m *memory) { m.unmap(); m.closeFiles() }, mem)
	return c, nil
}

func pow2(n uint64) uint64 { return 1 << bits.Len64(n-1) }

// Shards returns the number of rings, the shared one included.
func (c *Channel) Shards() int { return len(c.shards) }

// ShardSize is the size of the per-P rings.
func (c *Channel) ShardSize() int { return int(c.shards[0].size) }

// BufferSize is the rings' total size.
func (c *Channel) BufferSize() int {
	n := 0
	for i := range c.shards {
		n += int(c.shards[i].size)
	}
	return n
}

// MaxRecord is the largest body a record may have: a quarter of the
// smallest ring, so that padding at the end of a ring never leaves a
// record without room in an empty one.
func (c *Channel) MaxRecord() int { return int(c.maxRec) }

// Mode returns the channel's mode.
func (c *Channel) Mode() Mode { return c.mode }

// Claim is a record being written, between Begin and Commit or Release.
type Claim struct {
	sh  *shard
	pos uint64
	n   uint32
}

// Shard is the index of the ring the claim is in: a writer holding a
// claim is its ring's only writer, until Commit or Release.
func (cl Claim) Shard() int { return cl.sh.idx }

// Begin claims room for a record of n body bytes in the ring of the
// caller's P and returns where the body goes, 8-byte aligned. The caller
// stays pinned to its P until Commit (or, when Begin returns nil, which
// counts a drop, until Release): it writes the body, no more, and must
// not block.
func (c *Channel) Begin(n int) (Claim, unsafe.Pointer) {
	total := align8(uint64(n) + RecordHeaderSize)
	p := procPin()
	if p < c.nfast && uint64(n) <= c.maxRec && !c.closed.Load() {
		// The usual case: the P's own ring, room before its end and
		// within what the consumer was last seen to have consumed.
		sh := &c.shards[p]
		raceAcquire(unsafe.Pointer(sh))
		if pos := sh.head; pos&sh.mask+total <= sh.size && pos+total <= sh.limit {
			return Claim{sh: sh, pos: pos, n: uint32(n) + RecordHeaderSize}, unsafe.Add(sh.data, pos&sh.mask+RecordHeaderSize)
		}
		return c.beginSlow(sh, n, total)
	}
	return c.beginSlow(c.lock(p), n, total)
}

// beginSlow is Begin past its usual case, pinned on shard sh: padding at
// the end of the ring, a look at the consumer's position, making room
// (overwrite), waiting (block), dropping.
func (c *Channel) beginSlow(sh *shard, n int, total uint64) (Claim, unsafe.Pointer) {
	if uint64(n) > c.maxRec || c.closed.Load() {
		return c.drop(sh), nil
	}
	pos, ok := sh.reserve(total, c.mode)
	if !ok && c.mode == Block {
		c.unpin(sh)
		sh, pos, ok = c.wait(total)
	}
	if !ok {
		return c.drop(sh), nil
	}
	return Claim{sh: sh, pos: pos, n: uint32(n) + RecordHeaderSize}, unsafe.Add(sh.data, pos&sh.mask+RecordHeaderSize)
}

// drop counts a record Begin found no room for.
func (c *Channel) drop(sh *shard) Claim {
	order.StoreRelease64(sh.counter(lineDropped), order.AddOwned(&sh.dropped))
	return Claim{sh: sh}
}

// lock returns the ring of pinned P p: its own, or the shared one, locked.
func (c *Channel) lock(p int) *shard {
	if p < c.nfast {
		sh := &c.shards[p]
		raceAcquire(unsafe.Pointer(sh))
		return sh
	}
	sh := &c.shards[c.nfast]
	for !atomic.CompareAndSwapUint32(&sh.lock, 0, 1) {
		procUnpin()
		runtime.Gosched()
		procPin()
	}
	raceAcquire(unsafe.Pointer(sh))
	return sh
}

// pin pins the caller to its P and returns that P's ring, locked if it is
// the shared one.
func (c *Channel) pin() *shard { return c.lock(procPin()) }

func (c *Channel) unpin(sh *shard) {
	raceRelease(unsafe.Pointer(sh))
	if sh.idx == c.nfast {
		atomic.StoreUint32(&sh.lock, 0)
	}
	procUnpin()
}

// wait is Begin's wait for room in Block mode: unpinned, polling the
// consumer's position with growing pauses, until the record fits or the
// timeout passes (then it returns pinned, without room).
func (c *Channel) wait(total uint64) (*shard, uint64, bool) {
	start := time.Now()
	pause := time.Microsecond
	for i := 0; ; i++ {
		if i < 16 {
			runtime.Gosched()
		} else {
			time.Sleep(pause)
			pause = min(2*pause, time.Millisecond)
		}
		sh := c.pin()
		pos, ok := sh.reserve(total, Block)
		if ok || c.closed.Load() || (c.block > 0 && time.Since(start) >= c.block) {
			return sh, pos, ok
		}
		c.unpin(sh)
	}
}

// Commit publishes the record: its length and tag, then the head past
// it; the caller is unpinned.
func (c *Channel) Commit(cl Claim, tag uint32) {
	sh := cl.sh
	if hdr := unsafe.Add(sh.data, cl.pos&sh.mask); littleEndian {
		*(*uint64)(hdr) = uint64(cl.n) | uint64(tag)<<32 // length, then tag: one store
	} else {
		le.PutUint32(unsafe.Slice((*byte)(hdr), 8), cl.n)
		le.PutUint32(unsafe.Slice((*byte)(unsafe.Add(hdr, 4)), 4), tag)
	}
	sh.head = cl.pos + align8(uint64(cl.n))
	sh.records++
	order.Publish(sh.counter(lineRecords), sh.records, sh.counter(lineHead), sh.head)
	c.unpin(sh)
	if c.waiting.Load() != 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// Release ends a claim Begin found no room for; the caller is unpinned.
func (c *Channel) Release(cl Claim) { c.unpin(cl.sh) }

func (sh *shard) counter(off uintptr) *uint64 { return (*uint64)(unsafe.Add(sh.line, off)) }

// reserve finds room for a record of total bytes (header and body,
// padded) at the head, first padding to the end of the ring where it
// would run past it, and returns its position.
func (sh *shard) reserve(total uint64, mode Mode) (uint64, bool) {
	pos := sh.head
	off := pos & sh.mask
	pad := uint64(0)
	if off+total > sh.size {
		pad = sh.size - off
	}
	if end := pos + pad + total; end > sh.limit {
		if mode == Overwrite {
			sh.evict(end)
		} else if !sh.refresh(end) {
			return 0, false
		}
	}
	if pad != 0 {
		*(*uint32)(unsafe.Add(sh.data, off)) = uint32(pad) | padFlag
		pos += pad
		sh.head = pos // published with the record
	}
	return pos, true
}

// refresh reads the consumer's position, which moves the limit if it is
// valid: 8-aligned, not behind the last one read, not past the head.
func (sh *shard) refresh(end uint64) bool {
	if c := atomic.LoadUint64(sh.consPos); c&7 == 0 && c > sh.cons && c <= sh.head {
		sh.cons = c
		sh.limit = c + sh.size
		// What recovery after a crash may read from: older records may
		// be overwritten.
		order.StoreRelease64(sh.counter(lineTail), c)
	}
	return end <= sh.limit
}

// evict moves the tail past the oldest records until end fits, and an
// eighth of the ring more (the oldest records are far behind the head, a
// cache miss each: evicting in bursts reads them in order), then
// publishes it before the caller overwrites them. The records are this
// process's own writing: their lengths hold.
func (sh *shard) evict(end uint64) {
	end = min(end+sh.size/8, sh.head+sh.size)
	for sh.tail+sh.size < end {
		h := *(*uint32)(unsafe.Add(sh.data, sh.tail&sh.mask))
		n := align8(uint64(h &^ padFlag))
		if h&padFlag == 0 {
			sh.overwritten++
		}
		if n < RecordHeaderSize || n > sh.size { // cannot be: start over
			sh.tail = sh.head
			break
		}
		sh.tail += n
	}
	sh.limit = sh.tail + sh.size
	order.StoreRelease64(sh.counter(lineOverwritten), sh.overwritten)
	order.StoreOrdered64(sh.counter(lineTail), sh.tail)
}

// AppendMeta appends b to the metadata area and returns its offset there;
// consumers see it once it is complete.
func (c *Channel) AppendMeta(b []byte) (uint64, error) {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	if uint64(len(b)) > c.metaCap-c.metaLen {
		return 0, fmt.Errorf("channel: metadata area full (%d of %d bytes used, %d more asked): %w", c.metaLen, c.metaCap, len(b), ErrMetaFull)
	}
	off := c.metaLen
	meta := unsafe.Slice((*byte)(unsafe.Add(c.hdr, headerSize(len(c.shards)))), c.metaCap)
	copy(meta[off:], b)
	c.metaLen += uint64(len(b))
	order.StoreRelease64((*uint64)(unsafe.Add(c.hdr, offMetaLen)), c.metaLen)
	return off, nil
}

// ErrMetaFull reports AppendMeta past the metadata area's capacity.
var ErrMetaFull = errors.New("metadata area full")

// Files returns new descriptors of the channel's files for a consumer in
// another process: the data read-only, the positions writable. The
// caller closes them once handed over.
func (c *Channel) Files() (data, positions *os.File, err error) {
	if c.closed.Load() {
		return nil, nil, fmt.Errorf("channel: %w", os.ErrClosed)
	}
	data, positions, err = c.mem.files()
	if err != nil {
		return nil, nil, fmt.Errorf("channel: %w", err)
	}
	return data, positions, nil
}

// Stats sums the shards' counters.
func (c *Channel) Stats() ShardStats {
	var s ShardStats
	for i := range c.shards {
		sh := &c.shards[i]
		s.add(ShardStats{
			Records:     atomic.LoadUint64(sh.counter(lineRecords)),
			Dropped:     atomic.LoadUint64(sh.counter(lineDropped)),
			Overwritten: atomic.LoadUint64(sh.counter(lineOverwritten)),
		})
	}
	return s
}

// Close marks the channel closed: writers drop from now on, and consumers
// see it closed once they have read what it holds. The memory stays
// mapped until nothing reaches the channel, since a writer may still be
// in flight; the producer's descriptors are closed.
func (c *Channel) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	order.StoreRelease32((*uint32)(unsafe.Add(c.hdr, offState)), stateClosed)
	c.mem.closeFiles()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// Closed reports whether Close was called.
func (c *Channel) Closed() bool { return c.closed.Load() }

// Wake wakes an in-process reader waiting in Reader.Wait.
func (c *Channel) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// ReaderBytes returns the channel's data file as this process maps it,
// for tests that copy it (a file-backed channel's file holds the same).
func (c *Channel) ReaderBytes() []byte { return c.mem.data }
