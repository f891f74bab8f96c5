package tracepoint

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf/internal/channel"
	"github.com/uebpf/uebpf/internal/clock"
	"github.com/uebpf/uebpf/internal/order"
)

// SessionOptions configure a new session. The zero value (or nil) is a
// 1 MiB session in discard mode.
type SessionOptions struct {
	// BufferSize is the size of the session's rings in all (default
	// 1 MiB): one ring per P, each BufferSize / GOMAXPROCS rounded up to
	// a power of two of at least 4 KiB, and a small one for Ps beyond
	// (GOMAXPROCS raised later). Session.BufferSize says what it is.
	BufferSize int
	// Mode is what an event that finds its ring full does (Discard by
	// default).
	Mode Mode
	// BlockTimeout bounds a firing's wait in Block mode (default 1 s;
	// negative: no bound, a firing waits as long as the consumer takes).
	BlockTimeout time.Duration
	// File, if not nil, backs the session's channel: a new, empty file
	// opened read-write, in a directory only this user can write. What the
	// session committed survives a crash of the process there
	// (ParseChannel). The session closes it.
	File *os.File
	// MaxAttachments bounds the attachments open at once in the session
	// (default 256).
	MaxAttachments int
}

// DefaultBufferSize is SessionOptions.BufferSize's default.
const DefaultBufferSize = 1 << 20

// DefaultMaxAttachments is SessionOptions.MaxAttachments's default.
const DefaultMaxAttachments = 256

// Session records the events its attachments keep into a channel: rings
// in shared memory, one per P, that Go code in this process reads with
// Next, and a consumer in another process through the channel's files
// (Files), as an LTTng session's channel is read by its consumer daemon.
// An event that several attachments of one session keep is recorded once.
type Session struct {
	ch     *channel.Channel
	maxAtt int
	// counts are the attachments' record counters, by ring and then by
	// attachment slot (ring i's are counts[i*stride:]): a ring's writer is
	// pinned to its P, so the counts of a record are plain adds in memory
	// no other P writes.
	counts []slotCount
	stride int
	// tally sums the counters of the session's attachments.
	tally tally

	mu     sync.Mutex
	atts   map[*Attachment]struct{}
	index  map[*Point]uint32 // layouts written into the channel
	points []*Point          // by layout index
	free   []int             // attachment slots to reuse
	slots  int               // slots handed out
	// closing counts the attachments closed whose slots the collector has
	// not given back yet: a firing may still be counting into them.
	closing int
	closed  bool

	// Next's state.
	rmu      sync.Mutex
	reader   *ChannelReader
	batch    []Record
	deadline atomic.Int64 // Unix ns; 0: none
	poke     chan struct{}
}

// slotCount is what an attachment's records did in one ring.
type slotCount struct {
	recorded, dropped, fired uint64
}

// ErrSessionClosed reports Enable on a closed session.
var ErrSessionClosed = errors.New("session closed")

// ErrTooManyAttachments reports an Enable past SessionOptions.MaxAttachments.
var ErrTooManyAttachments = errors.New("too many attachments in the session")

// NewSession returns a session.
func NewSession(opts *SessionOptions) (*Session, error) {
	var o SessionOptions
	if opts != nil {
		o = *opts
	}
	if o.BufferSize <= 0 {
		o.BufferSize = DefaultBufferSize
	}
	if o.MaxAttachments <= 0 {
		o.MaxAttachments = DefaultMaxAttachments
	}
	shards := runtime.GOMAXPROCS(0)
	ch, err := channel.New(channel.Options{
		Name:         "session",
		Shards:       shards,
		ShardSize:    (o.BufferSize + shards - 1) / shards,
		Mode:         channel.Mode(o.Mode),
		BlockTimeout: o.BlockTimeout,
		File:         o.File,
		PID:          int(processContext.Vpid),
		Procname:     cString(processContext.Procname[:]),
		ClockOffset:  clock.RealtimeOffset(),
		Created:      uint64(clock.Now()),
	})
	if err != nil {
		return nil, fmt.Errorf("tracepoint: session of %d bytes: %w", o.BufferSize, err)
	}
	s := &Session{
		ch:     ch,
		maxAtt: o.MaxAttachments,
		// Each ring's counts are a cache line or more from the next's.
		stride: o.MaxAttachments + 3,
		atts:   map[*Attachment]struct{}{},
		index:  map[*Point]uint32{},
		poke:   make(chan struct{}, 1),
	}
	s.counts = make([]slotCount, s.stride*ch.Shards())
	return s, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// BufferSize is the size of the session's rings in all.
func (s *Session) BufferSize() int { return s.ch.BufferSize() }

// Mode is the session's mode.
func (s *Session) Mode() Mode { return Mode(s.ch.Mode()) }

// Shards is the number of the session's rings.
func (s *Session) Shards() int { return s.ch.Shards() }

// Attachments is the number of the session's attachments open.
func (s *Session) Attachments() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.atts)
}

// BufferSizeFor is the size of the rings of a session asked for size
// bytes (SessionOptions.BufferSize) in this process now: what
// Session.BufferSize will say.
func BufferSizeFor(size int) int {
	if size <= 0 {
		size = DefaultBufferSize
	}
	shards := runtime.GOMAXPROCS(0)
	return channel.BufferSizeFor(shards, (size+shards-1)/shards)
}

// Files returns new descriptors of the session's channel for a consumer
// in another process (see MapChannel): the data read-only, the consumer
// positions writable. The caller closes them once handed over. One
// consumer reads a session at a time; Next is one too.
func (s *Session) Files() (data, positions *os.File, err error) {
	data, positions, err = s.ch.Files()
	if err != nil {
		return nil, nil, fmt.Errorf("tracepoint: session: %w", err)
	}
	return data, positions, nil
}

// ChannelStats returns the channel's counters, summed over its rings.
func (s *Session) ChannelStats() ChannelStats {
	st := s.ch.Stats()
	return ChannelStats{Records: st.Records, Dropped: st.Dropped, Overwritten: st.Overwritten}
}

// Enable attaches a program to tp whose kept events the session records.
// Without a program option (Filter, Program, VMProgram) it records every
// event.
func (s *Session) Enable(tp Target, opts ...Option) (*Attachment, error) {
	return attach(tp.point(), s, opts)
}

// add registers an attachment of p: a counter slot, and p's layout in the
// channel if it is the first of p.
func (s *Session) add(p *Point, a *Attachment) error {
	s.mu.Lock()
	if len(s.free) == 0 && s.slots >= s.maxAtt && s.closing > 0 {
		// Every slot is taken, some by attachments closed but not
		// collected yet: collect them (rare: a session whose attachments
		// come and go hundreds of times between collections).
		s.mu.Unlock()
		runtime.GC()
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			s.mu.Lock()
			n := len(s.free)
			s.mu.Unlock()
			if n > 0 {
				break
			}
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.closed {
		return ErrSessionClosed
	}
	if body := 8 + 2*8 + p.info.Size; body > s.ch.MaxRecord() {
		return fmt.Errorf("a %d-byte record does not fit the session's %d-byte rings (at most %d): give it a larger buffer", body, s.ch.ShardSize(), s.ch.MaxRecord())
	}
	slot := -1
	switch {
	case len(s.free) > 0:
		slot = s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
	case s.slots < s.maxAtt:
		slot = s.slots
		s.slots++
	default:
		return fmt.Errorf("%d attachments (at most %d, SessionOptions.MaxAttachments): %w", s.slots, s.maxAtt, ErrTooManyAttachments)
	}
	index, ok := s.index[p]
	if !ok {
		index = uint32(len(s.points))
		if _, err := s.ch.AppendMeta(appendLayout(nil, index, p.info)); err != nil {
			s.free = append(s.free, slot)
			return err
		}
		s.index[p] = index
		s.points = append(s.points, p)
	}
	a.slot, a.tag = slot, recordTag(index, 0)
	s.atts[a] = struct{}{}
	return nil
}

func (s *Session) remove(a *Attachment) {
	s.mu.Lock()
	if _, ok := s.atts[a]; ok {
		delete(s.atts, a)
		s.closing++
	}
	s.mu.Unlock()
}

// slotSums sums an attachment slot's counts over the rings. The firings
// are loaded last: a writer counts them before the record.
func (s *Session) slotSums(slot int) (recorded, dropped, fired uint64) {
	for i := slot; i < len(s.counts); i += s.stride {
		recorded += atomic.LoadUint64(&s.counts[i].recorded)
		dropped += atomic.LoadUint64(&s.counts[i].dropped)
	}
	for i := slot; i < len(s.counts); i += s.stride {
		fired += atomic.LoadUint64(&s.counts[i].fired)
	}
	return recorded, dropped, fired
}

// freeSlot gives back the slot of an attachment the collector freed: no
// firing can count into it any more.
func (s *Session) freeSlot(slot int) {
	for i := slot; i < len(s.counts); i += s.stride {
		s.counts[i] = slotCount{}
	}
	s.mu.Lock()
	s.free = append(s.free, slot)
	s.closing--
	s.mu.Unlock()
}

// write records an event kept by a: its payload at payload, the context
// fields cf says were collected from ctx (nil when none were), and the
// timestamp *ts, read now if it is 0 (so that the rings of one P hold
// their records nearly in time order: a goroutine preempted between its
// reading and Begin may land after a later one). It counts the record (or the drop)
// in a's slot, and the firing there too if firing is set. Between Begin
// and Commit the goroutine is pinned to its P: only stores and one copy.
func (s *Session) write(a *Attachment, payload unsafe.Pointer, ctx *Context, cf Collected, ts *int64, firing bool) bool {
	size := a.point.info.Size
	if *ts == 0 {
		// Before Begin: the clock may take a lock, which a pinned
		// goroutine must not.
		*ts = clock.Now()
	}
	cl, dst := s.ch.Begin(cf.contextSize() + size)
	c := &s.counts[cl.Shard()*s.stride+a.slot]
	if firing {
		order.AddOwned(&c.fired)
	}
	if dst == nil {
		order.AddOwned(&c.dropped)
		s.ch.Release(cl)
		return false
	}
	*(*uint64)(dst) = uint64(*ts)
	body := unsafe.Add(dst, 8)
	if cf&HasVtid != 0 {
		*(*int64)(body) = ctx.Vtid
		body = unsafe.Add(body, 8)
	}
	if cf&HasGoid != 0 {
		*(*uint64)(body) = ctx.Goid
		body = unsafe.Add(body, 8)
	}
	if a.point.info.Align == 8 && size <= 256 {
		// A payload with a word-aligned field is word-aligned and a
		// whole number of words: copied by words, without memmove's call
		// and its spills.
		for i := 0; i < size; i += 8 {
			*(*uint64)(unsafe.Add(body, i)) = *(*uint64)(unsafe.Add(payload, i))
		}
	} else {
		copy(unsafe.Slice((*byte)(body), size), unsafe.Slice((*byte)(payload), size))
	}
	order.AddOwned(&c.recorded)
	s.ch.Commit(cl, a.tag|uint32(cf)<<tagIndexBits)
	return true
}

// Record is one recorded event, as Next returns it.
type Record struct {
	// Tracepoint is the tracepoint that fired.
	Tracepoint *Point
	// Context is the context block: timestamp, thread, process. Vtid and
	// Goid are 0 unless Has says they were collected.
	Context Context
	Has     Collected
	// Payload holds the payload's bytes (Info.Size of them).
	Payload []byte
}

// maxBatch bounds the records Next takes from the rings at once.
const maxBatch = 256

// Next returns the next record, blocking until there is one or the
// deadline (SetDeadline) passes (os.ErrDeadlineExceeded). After Close it
// returns what the session held, then an error wrapping os.ErrClosed.
// Records of one ring (one P) come in order; those of several rings are
// merged by timestamp within what Next takes at once. Next is the
// session's consumer: a consumer of its Files at the same time would
// take records from it.
func (s *Session) Next() (Record, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if _, err := s.readerLocked(); err != nil {
		return Record{}, err
	}
	for len(s.batch) == 0 {
		if err := s.fill(); err != nil {
			return Record{}, err
		}
		if len(s.batch) > 0 {
			break
		}
		if s.ch.Closed() {
			return Record{}, fmt.Errorf("tracepoint: session: %w", os.ErrClosed)
		}
		d := time.Duration(s.deadline.Load())
		wait := 10 * time.Millisecond
		if d != 0 {
			left := time.Until(time.Unix(0, int64(d)))
			if left <= 0 {
				return Record{}, fmt.Errorf("tracepoint: session: %w", os.ErrDeadlineExceeded)
			}
			wait = min(wait, left)
		}
		s.reader.r.Wait(wait)
		select {
		case <-s.poke:
		default:
		}
	}
	r := s.batch[0]
	s.batch = s.batch[1:]
	return r, nil
}

// Reader returns the session's consumer in this process: what Next reads
// with, for code that writes records out as they are (package ctf). A
// session has one consumer at a time: use either Reader or Next, from one
// goroutine.
func (s *Session) Reader() (*ChannelReader, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.readerLocked()
}

func (s *Session) readerLocked() (*ChannelReader, error) {
	if s.reader == nil {
		r, err := newChannelReader(s.ch.Reader())
		if err != nil {
			return nil, err
		}
		s.reader = r
	}
	return s.reader, nil
}

// fill takes what the rings hold, up to maxBatch records each, copied out
// and merged by timestamp.
func (s *Session) fill() error {
	var buf []byte
	s.batch = s.batch[:0]
	s.mu.Lock()
	points := s.points
	s.mu.Unlock()
	_, err := s.reader.ReadAll(maxBatch, func(ev *Event) {
		if int(ev.Index) >= len(points) {
			return
		}
		start := len(buf)
		buf = append(buf, ev.Payload...)
		ctx := processContext
		ctx.TimestampNs, ctx.Vtid, ctx.Goid = ev.TimestampNs, ev.Vtid, ev.Goid
		s.batch = append(s.batch, Record{Tracepoint: points[ev.Index], Context: ctx, Has: ev.Has, Payload: buf[start:len(buf):len(buf)]})
	})
	if err != nil {
		return fmt.Errorf("tracepoint: session: %w", err)
	}
	// The payloads moved when buf grew: point them at the final buffer.
	off := 0
	for i := range s.batch {
		n := len(s.batch[i].Payload)
		s.batch[i].Payload = buf[off : off+n : off+n]
		off += n
	}
	sortByTime(s.batch)
	return nil
}

// sortByTime sorts records by timestamp, keeping each ring's order
// (insertion sort: batches are short and mostly in order).
func sortByTime(rs []Record) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Context.TimestampNs < rs[j-1].Context.TimestampNs; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// SetDeadline makes Next fail with os.ErrDeadlineExceeded after t; a time
// in the past makes it return at once when no record is ready; the zero
// time blocks.
func (s *Session) SetDeadline(t time.Time) {
	if t.IsZero() {
		s.deadline.Store(0)
	} else {
		s.deadline.Store(max(t.UnixNano(), 1))
	}
	select {
	case s.poke <- struct{}{}:
	default:
	}
	s.ch.Wake()
}

// Stats returns the session's counters: Matched counts events its
// attachments kept (once per event, however many kept it), Recorded and
// Dropped how many of them the rings took.
func (s *Session) Stats() Stats {
	st := s.tally.load()
	return Stats{Matched: st.Recorded + st.Dropped, Recorded: st.Recorded, Dropped: st.Dropped}
}

// Close detaches every program of the session and closes its channel:
// Next and consumers read what it holds, then see it closed. Close is
// idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	atts := make([]*Attachment, 0, len(s.atts))
	for a := range s.atts {
		atts = append(atts, a)
	}
	s.mu.Unlock()
	for _, a := range atts {
		a.Close()
	}
	return s.ch.Close()
}

// Decode returns a record's payload as a T, which must be the payload type
// of the record's tracepoint.
func Decode[T any](r Record) (T, error) {
	var v T
	if r.Tracepoint == nil {
		return v, fmt.Errorf("tracepoint: decoding a record of no tracepoint as %T: %w", v, ErrType)
	}
	if r.Tracepoint.typ != reflect.TypeFor[T]() {
		return v, fmt.Errorf("tracepoint: decoding a record of %s (%v) as %T: %w", r.Tracepoint.Name(), r.Tracepoint.typ, v, ErrType)
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)), r.Payload)
	return v, nil
}

// ErrType reports Decode into a type other than the tracepoint's payload.
var ErrType = errors.New("not the payload type")
