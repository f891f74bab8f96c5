package channel

import (
	"github.com/uebpf/uebpf/internal/order"

	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// Reader is a consumer's side of a channel: the files another process
// handed over (Map), the producer's own memory (Channel.Reader), or a
// copy of a data file (Parse, after a crash). It reads records without
// trusting anything in them (see the package doc). A Reader is not safe
// for concurrent use.
type Reader struct {
	data []byte // the data file
	pos  []byte // the positions file; nil for a copy
	hdr  Header

	metaOff, metaCap uint64
	shards           []rshard
	// copyFirst: records are copied before they are handed out, since
	// the producer may be overwriting them (overwrite mode).
	copyFirst bool
	buf       []byte

	ch      *Channel // the producer, in this process
	release func()
	broken  error // the mapping faulted: nothing more is read
}

// rshard is the consumer's state of one ring.
type rshard struct {
	base, size, mask uint64
	line             uint64  // its line in the header
	cons             uint64  // where the next record is
	pos              *uint64 // the consumer position in the positions file
	skipped          uint64  // bytes skipped: records that did not hold
	lost             uint64  // bytes overwritten before they were read
}

// ReaderStats count what a reader could not read.
type ReaderStats struct {
	// Skipped counts bytes of records that did not hold (a record's
	// length outside its ring, a head moving back): the rest of what the
	// producer had published was skipped.
	Skipped uint64
	// Lost counts bytes of records overwritten before they were read
	// (overwrite mode).
	Lost uint64
}

var le = binary.LittleEndian

// Map maps the files a producer handed over: data read-only, positions
// writable. Reading starts at the positions the file holds (where the
// last consumer stopped). Without positions, the reader is a snapshot:
// it reads what the rings hold, from their tails, and moves no consumer
// position. Close unmaps them; the files may be closed once Map returns.
func Map(data, positions *os.File) (*Reader, error) {
	d, p, err := mapFiles(data, positions)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	var r *Reader
	err = guard(func() error {
		var err error
		r, err = parse(d, p)
		return err
	})
	if err != nil {
		unmapFiles(d, p)
		return nil, fmt.Errorf("channel: %w", err)
	}
	r.release = func() { unmapFiles(d, p) }
	if p == nil {
		r.copyFirst = true // the producer writes over what a snapshot reads
	}
	return r, nil
}

// Parse reads a copy of a data file, such as the file of a file-backed
// channel whose process died: the records each ring holds from its tail
// to its head.
func Parse(data []byte) (*Reader, error) {
	r, err := parse(data, nil)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	r.copyFirst = false // nothing writes a copy
	return r, nil
}

// Reader returns a reader of the channel in this process.
func (c *Channel) Reader() *Reader {
	r, err := parse(c.mem.data, c.mem.pos)
	if err != nil {
		panic(fmt.Sprintf("channel: own header: %v", err)) // written by New
	}
	r.ch = c
	return r
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrCorrupt)
}

// parse checks a data file's header against the file's size and sets up
// the reader's shards.
func parse(data, pos []byte) (*Reader, error) {
	if len(data) < headerFixed {
		return nil, corrupt("data file of %d bytes", len(data))
	}
	if string(data[offMagic:offMagic+8]) != Magic {
		return nil, corrupt("data file magic %q, want %q", data[offMagic:offMagic+8], Magic)
	}
	if v := le.Uint32(data[offVersion:]); v != Version {
		return nil, fmt.Errorf("channel layout version %d, this reader reads %d: %w", v, Version, ErrCorrupt)
	}
	h := Header{
		Mode:        Mode(le.Uint32(data[offMode:])),
		Shards:      int(le.Uint32(data[offShards:])),
		ShardSize:   le.Uint64(data[offShardSize:]),
		MetaCap:     le.Uint64(data[offMetaCap:]),
		Size:        le.Uint64(data[offSize:]),
		PID:         int64(le.Uint64(data[offPID:])),
		ClockOffset: int64(le.Uint64(data[offClockOffset:])),
		Created:     le.Uint64(data[offCreated:]),
		Procname:    cString(data[offProcname : offProcname+16]),
	}
	metaOff, dataOff := le.Uint64(data[offMetaOff:]), le.Uint64(data[offDataOff:])
	switch {
	case h.Mode > Block:
		return nil, corrupt("mode %d", h.Mode)
	case h.Shards < 1 || h.Shards > MaxShards:
		return nil, corrupt("%d shards (at most %d)", h.Shards, MaxShards)
	case h.Size > uint64(len(data)):
		return nil, corrupt("header says %d bytes, the file has %d", h.Size, len(data))
	case metaOff < headerFixed+uint64(h.Shards)*shardLine || metaOff%8 != 0 || metaOff > h.Size:
		return nil, corrupt("metadata at %d", metaOff)
	case h.MetaCap > MaxMetaSize || h.MetaCap > h.Size-metaOff:
		return nil, corrupt("metadata of %d bytes at %d in %d", h.MetaCap, metaOff, h.Size)
	case dataOff < metaOff+h.MetaCap || dataOff > h.Size:
		return nil, corrupt("data at %d", dataOff)
	case pos != nil && uint64(len(pos)) < uint64(h.Shards)*shardLine:
		return nil, corrupt("positions file of %d bytes for %d shards", len(pos), h.Shards)
	}
	r := &Reader{data: data, pos: pos, hdr: h, metaOff: metaOff, metaCap: h.MetaCap, copyFirst: h.Mode == Overwrite}
	r.shards = make([]rshard, h.Shards)
	for i := range r.shards {
		s := &r.shards[i]
		s.line = headerFixed + uint64(i)*shardLine
		s.base, s.size = le.Uint64(data[s.line+lineOffset:]), le.Uint64(data[s.line+lineSize:])
		if s.size < MinShardSize || s.size > MaxShardSize || s.size&(s.size-1) != 0 ||
			s.base%8 != 0 || s.base < dataOff || s.base > h.Size || s.size > h.Size-s.base {
			return nil, corrupt("shard %d: %d bytes at %d in %d", i, s.size, s.base, h.Size)
		}
		s.mask = s.size - 1
		if pos != nil {
			s.pos = (*uint64)(unsafe.Pointer(&pos[i*shardLine]))
			s.cons = atomic.LoadUint64(s.pos)
		} else {
			s.cons = r.load(s, lineTail)
		}
	}
	return r, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// load reads a word of a shard's line.
func (r *Reader) load(s *rshard, off uint64) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.data[s.line+off])))
}

// Header returns the channel's header.
func (r *Reader) Header() Header { return r.hdr }

// Shards returns the number of rings.
func (r *Reader) Shards() int { return len(r.shards) }

// Closed reports whether the producer closed the channel: what the rings
// hold now is all they will hold.
func (r *Reader) Closed() bool {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[offState]))) == stateClosed
}

// Meta returns the metadata appended since offset from (a copy).
func (r *Reader) Meta(from uint64) ([]byte, error) {
	var out []byte
	err := r.guarded(func() error {
		n := atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.data[offMetaLen])))
		if n > r.metaCap || from > n {
			return corrupt("metadata of %d bytes (capacity %d, %d read)", n, r.metaCap, from)
		}
		out = append([]byte(nil), r.data[r.metaOff+from:r.metaOff+n]...)
		return nil
	})
	return out, err
}

// ShardStats returns the counters the producer published for shard i.
func (r *Reader) ShardStats(i int) ShardStats {
	var st ShardStats
	r.guarded(func() error {
		s := &r.shards[i]
		st = ShardStats{Records: r.load(s, lineRecords), Dropped: r.load(s, lineDropped), Overwritten: r.load(s, lineOverwritten)}
		return nil
	})
	return st
}

// Stats sums every shard's counters.
func (r *Reader) Stats() ShardStats {
	var st ShardStats
	for i := range r.shards {
		st.add(r.ShardStats(i))
	}
	return st
}

// ReaderStats returns what the reader skipped or lost.
func (r *Reader) ReaderStats() ReaderStats {
	var st ReaderStats
	for i := range r.shards {
		st.Skipped += r.shards[i].skipped
		st.Lost += r.shards[i].lost
	}
	return st
}

// Pending reports whether some ring holds records not read yet.
func (r *Reader) Pending() bool {
	pending := false
	r.guarded(func() error {
		for i := range r.shards {
			s := &r.shards[i]
			if r.load(s, lineHead) != s.cons {
				pending = true
				return nil
			}
		}
		return nil
	})
	return pending
}

// maxCopy bounds what one read of an overwrite-mode ring copies.
const maxCopy = 1 << 20

// Read hands fn the records of shard i from where the reader is, up to
// max of them (0: no bound), and then moves the consumer position past
// them. body is the record's body, in the shared mapping unless records
// are copied first: valid until the next Read, and the producer may be
// changing it (read each field once). It returns how many records it
// handed out.
func (r *Reader) Read(i int, max int, fn func(tag uint32, body []byte)) (int, error) {
	if i < 0 || i >= len(r.shards) {
		return 0, fmt.Errorf("channel: shard %d of %d", i, len(r.shards))
	}
	n := 0
	err := r.guarded(func() error {
		n = r.read(&r.shards[i], max, fn)
		return nil
	})
	return n, err
}

func (r *Reader) read(s *rshard, max int, fn func(tag uint32, body []byte)) int {
	head := r.load(s, lineHead)
	start := s.cons
	if r.copyFirst {
		// Overwrite mode: what is before the tail is gone (the tail is
		// always a record's start), and may be overwritten while it is
		// read: it is copied first, and what lies before the tail
		// published after the copy may be torn.
		if t := r.load(s, lineTail); t > start {
			s.lost += t - start
			start = t
		}
		if start > head { // the producer went on meanwhile
			r.advance(s, start)
			return 0
		}
	}
	if head < start || head-start > s.size {
		// Not what a producer that keeps the layout publishes.
		r.skip(s, start, head)
		return 0
	}
	end := head
	view := func(p uint64) []byte { return r.data[s.base+p&s.mask : s.base+s.size] }
	if r.copyFirst && start < head {
		end = min(head, start+chunkSize(s.size))
		from := start
		buf := r.copyRing(s, from, end)
		order.LoadFence()
		if t := r.load(s, lineTail); t > start {
			s.lost += min(t, end) - start
			if t >= end {
				r.advance(s, t)
				return 0
			}
			start = t
		}
		view = func(p uint64) []byte { return buf[p-from:] }
	}
	p, n := start, 0
	for p < end && (max <= 0 || n < max) {
		off := p & s.mask
		v := view(p)
		if len(v) < RecordHeaderSize {
			break
		}
		h := le.Uint32(v)
		l := uint64(h &^ padFlag)
		if h&padFlag != 0 && l != s.size-off || h&padFlag == 0 && (l < RecordHeaderSize || l > s.size-off) {
			r.skip(s, p, head)
			return n
		}
		if h&padFlag != 0 {
			l = align8(l) // the rest of the ring
		}
		if align8(l) > end-p || l > uint64(len(v)) {
			if end < head {
				break // cut by the copy: the next read takes it
			}
			r.skip(s, p, head)
			return n
		}
		if h&padFlag == 0 {
			fn(le.Uint32(v[4:]), v[RecordHeaderSize:l:l])
			n++
		}
		p += align8(l)
	}
	r.advance(s, p)
	return n
}

// copyRing copies the ring's bytes from position start to end (at most a
// ring) into the reader's buffer, where they are contiguous.
func (r *Reader) copyRing(s *rshard, start, end uint64) []byte {
	n := end - start
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	buf := r.buf[:n]
	off := start & s.mask
	first := min(n, s.size-off)
	copy(buf, r.data[s.base+off:s.base+off+first])
	copy(buf[first:], r.data[s.base:s.base+n-first])
	return buf
}

// skip gives up on a ring's records from p to end: they do not hold.
func (r *Reader) skip(s *rshard, p, end uint64) {
	if end > p {
		s.skipped += end - p
	}
	r.advance(s, end)
}

// advance moves the consumer position to p.
func (r *Reader) advance(s *rshard, p uint64) {
	s.cons = p
	if s.pos != nil {
		atomic.StoreUint64(s.pos, p)
	}
}

// Wait waits up to d for a record: in the producer's process until a
// writer says there is one, elsewhere d (a consumer in another process
// polls).
func (r *Reader) Wait(d time.Duration) {
	if r.ch == nil {
		time.Sleep(d)
		return
	}
	r.ch.waiting.Add(1)
	defer r.ch.waiting.Add(-1)
	if r.Pending() || r.Closed() {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.ch.wake:
	case <-t.C:
	}
}

// Close releases the reader's mappings.
func (r *Reader) Close() error {
	if r.release != nil {
		r.release()
		r.release = nil
	}
	r.broken = os.ErrClosed
	return nil
}

// guarded runs f with faults on the mapping turned into an error: a file
// the producer truncates under a mapping makes reads fault, and that must
// not take the consumer down. After a fault nothing more is read.
func (r *Reader) guarded(f func() error) error {
	if r.broken != nil {
		return fmt.Errorf("channel: %w", r.broken)
	}
	if err := guard(f); err != nil {
		if errors.Is(err, errFault) {
			r.broken = err
		}
		return fmt.Errorf("channel: %w", err)
	}
	return nil
}

var errFault = errors.New("the channel's memory faulted (its file was truncated?)")

func guard(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if re, ok := p.(runtime.Error); ok && isFault(re) {
				err = fmt.Errorf("%w: %v", errFault, re)
				return
			}
			panic(p)
		}
	}()
	return f()
}

// isFault tells a memory fault from other run-time errors (an index out
// of range is a bug, not the producer's doing). Faults carry their
// address, except where the system reports none (qemu's SIGBUS).
func isFault(e runtime.Error) bool {
	_, ok := e.(interface{ Addr() uintptr })
	return ok || strings.Contains(e.Error(), "invalid memory address")
}

// chunkSize is how much of a ring one read copies: enough for the largest
// record (Channel.MaxRecord).
func chunkSize(ring uint64) uint64 { return max(maxCopy, ring/4) }
