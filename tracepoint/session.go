package tracepoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf/maps"
)

// Session records the events its attachments keep into a ring buffer that
// Go code reads with Next, as an LTTng session does.
type Session struct {
	ring   maps.RingBufMap
	prod   *maps.RingProducer // writes records in place
	reader *maps.Reader
	// tally sums the counters of the session's attachments, which count
	// what they record and drop.
	tally tally

	mu     sync.Mutex
	atts   map[*Attachment]struct{}
	points map[uint32]*Point // the tracepoints its records come from
	closed bool
}

// ErrSessionClosed reports Enable on a closed session.
var ErrSessionClosed = errors.New("session closed")

// recordHeaderSize is the size of the header a session writes in front of
// each record: the tracepoint's id and the record's size, two u32.
const recordHeaderSize = 8

// NewSession returns a session whose ring buffer holds size bytes of
// records (rounded up to a power of two of at least a page). A record
// takes 8 bytes of ring header, 8 of session header and Info.RecordSize.
func NewSession(size int) (*Session, error) {
	n := max(os.Getpagesize(), 1<<bits.Len(uint(max(size, 1)-1)))
	m, err := maps.New(&maps.Spec{Name: "tracepoint_session", Type: maps.RingBuf, MaxEntries: uint32(n)})
	if err != nil {
		return nil, fmt.Errorf("tracepoint: session ring of %d bytes: %w", n, err)
	}
	prod, err := maps.NewRingProducer(m)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("tracepoint: session ring producer: %w", err)
	}
	r, err := maps.NewReader(m)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("tracepoint: session ring reader: %w", err)
	}
	return &Session{
		ring:   m.(maps.RingBufMap),
		prod:   prod,
		reader: r,
		atts:   map[*Attachment]struct{}{},
		points: map[uint32]*Point{},
	}, nil
}

// Enable attaches a program to tp whose kept events the session records.
// Without a program option (Filter, Program, VMProgram) it records every
// event.
func (s *Session) Enable(tp Target, opts ...Option) (*Attachment, error) {
	return attach(tp.point(), s, opts)
}

// add registers an attachment of p, unless the session is closed.
func (s *Session) add(p *Point, a *Attachment) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.atts[a] = struct{}{}
	s.points[p.id] = p
	return true
}

func (s *Session) remove(a *Attachment) {
	s.mu.Lock()
	delete(s.atts, a)
	s.mu.Unlock()
}

// record writes rec, the record of p, into the ring and counts it in c,
// the recording attachment's counters (which the session's Stats sum), as
// recorded and, if firing is set, as the firing of p; false when the ring
// is full.
func (s *Session) record(p *Point, rec unsafe.Pointer, c *counters, firing bool) bool {
	dst, claim, ok := s.prod.Begin(uint64(recordHeaderSize + p.recordSize))
	if !ok {
		return false
	}
	*(*[2]uint32)(dst) = recordHeader(p)
	copy(unsafe.Slice((*byte)(unsafe.Add(dst, recordHeaderSize)), p.recordSize), unsafe.Slice((*byte)(rec), p.recordSize))
	c.count(claim, firing)
	s.prod.Commit(claim)
	return true
}

// recordPayload writes a record of p made of payload and a context block
// with timestamp ts into the ring, without a record built first: the
// payload is copied once, into the ring, and the context block is stored
// there directly. It counts the record in c as record does; false when the
// ring is full. Between Begin and Commit, which hold the ring's producer
// lock, there are only stores and one copy.
func (s *Session) recordPayload(p *Point, payload unsafe.Pointer, ts int64, c *counters, firing bool) bool {
	dst, claim, ok := s.prod.Begin(uint64(recordHeaderSize + p.recordSize))
	if !ok {
		return false
	}
	*(*[2]uint32)(dst) = recordHeader(p)
	rec := unsafe.Add(dst, recordHeaderSize)
	copy(unsafe.Slice((*byte)(rec), p.info.Size), unsafe.Slice((*byte)(payload), p.info.Size))
	// Zeros up to the context block, not what the ring held before.
	clear(unsafe.Slice((*byte)(unsafe.Add(rec, p.info.Size)), p.ctxOffset-p.info.Size))
	ctx := (*Context)(unsafe.Add(rec, p.ctxOffset)) // 8-byte aligned, as the ring's data
	*ctx = processContext
	ctx.TimestampNs = uint64(ts)
	c.count(claim, firing)
	s.prod.Commit(claim)
	return true
}

// recordHeader is the header a session writes in front of a record of p.
func recordHeader(p *Point) [2]uint32 { return [2]uint32{p.id, uint32(p.recordSize)} }

// Record is one recorded event.
type Record struct {
	// Tracepoint is the tracepoint that fired.
	Tracepoint *Point
	// Context is the context block: timestamp, thread, process.
	Context Context
	// Payload holds the payload's bytes (Info.Size of them).
	Payload []byte
	// Raw is the whole record as programs saw it: payload, padding and
	// context block.
	Raw []byte
}

// Next returns the next record, blocking until there is one or the
// deadline (SetDeadline) passes (os.ErrDeadlineExceeded). After Close it
// fails with an error wrapping os.ErrClosed.
func (s *Session) Next() (Record, error) {
	r, err := s.reader.Read()
	if err != nil {
		return Record{}, fmt.Errorf("tracepoint: session: %w", err)
	}
	return s.decode(r.RawSample)
}

// decode splits a ring record into its header and the record.
func (s *Session) decode(b []byte) (Record, error) {
	if len(b) < recordHeaderSize {
		return Record{}, fmt.Errorf("tracepoint: session: %d-byte ring record", len(b))
	}
	id, size := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	s.mu.Lock()
	p := s.points[id]
	s.mu.Unlock()
	raw := b[recordHeaderSize:]
	if p == nil || int(size) != p.recordSize || len(raw) < p.recordSize {
		return Record{}, fmt.Errorf("tracepoint: session: record of tracepoint %d with %d bytes does not match", id, size)
	}
	rec := Record{Tracepoint: p, Payload: raw[:p.info.Size:p.info.Size], Raw: raw[:p.recordSize]}
	rec.Context = *(*Context)(unsafe.Pointer(&raw[p.info.ContextOffset()]))
	return rec, nil
}

// SetDeadline makes Next fail with os.ErrDeadlineExceeded after t; a time
// in the past makes it return at once when no record is ready; the zero
// time blocks.
func (s *Session) SetDeadline(t time.Time) { s.reader.SetDeadline(t) }

// Stats returns the session's counters: Matched counts events its
// attachments kept, Recorded and Dropped how many of them the ring took.
func (s *Session) Stats() Stats {
	st := s.tally.load()
	return Stats{Matched: st.Recorded + st.Dropped, Recorded: st.Recorded, Dropped: st.Dropped}
}

// Close detaches every program of the session and closes its ring. Close
// is idempotent.
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
	return errors.Join(s.reader.Close(), s.ring.Close())
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
