package maps

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Record is one ring buffer record, as in cilium/ebpf's ringbuf package.
type Record struct {
	RawSample []byte
	// Remaining is the number of bytes still to be read in the ring after
	// this record.
	Remaining int
}

// Reader consumes a ring buffer from Go: blocking reads with an optional
// deadline, batched reads, and the ring's drop counter. Producers wake a
// blocked reader when they commit the record it waits for (unless they pass
// RBNoWakeup) or when they pass RBForceWakeup. Read methods may be called
// from several goroutines; each record is delivered once.
type Reader struct {
	rb *ringBuf

	mu    sync.Mutex // serialises reads
	timer *time.Timer

	deadlineMu sync.Mutex
	deadline   time.Time
	kick       chan struct{} // deadline changed

	closeOnce sync.Once
	closed    chan struct{}
}

// NewReader returns a reader for a ring buffer map created by this package.
func NewReader(m Map) (*Reader, error) {
	rb, ok := m.(*ringBuf)
	if !ok {
		return nil, fmt.Errorf("map %q: type %s is not a userspace ring buffer: %w", m.Name(), m.Type(), ErrInvalid)
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Reader{rb: rb, timer: t, kick: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// SetDeadline sets the time after which blocked and future reads fail with
// os.ErrDeadlineExceeded. The zero time means no deadline; a time in the past
// makes reads return at once when no record is ready.
func (r *Reader) SetDeadline(t time.Time) {
	r.deadlineMu.Lock()
	r.deadline = t
	r.deadlineMu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Close makes blocked and future reads fail with ErrClosed. It does not close
// the ring buffer.
func (r *Reader) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	return nil
}

// Read returns the next record, blocking until there is one.
func (r *Reader) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

// ReadInto is Read reusing rec.RawSample's storage.
func (r *Reader) ReadInto(rec *Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readLocked(rec)
}

// ReadBatch blocks until at least one record is available, then fills recs
// with as many records as are ready (reusing their RawSample storage) and
// returns how many it read. The first n records are valid even when err is
// not nil.
//
// Reads fail with an error wrapping ErrInvalid when a record header is
// corrupt (its length runs past what was produced). The records produced
// up to then are dropped (Dropped counts one) and later reads go on with
// the records produced after.
func (r *Reader) ReadBatch(recs []Record) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.readLocked(&recs[0]); err != nil {
		return 0, err
	}
	n := 1
	for ; n < len(recs); n++ {
		var ok bool
		var err error
		recs[n].RawSample, recs[n].Remaining, ok, err = r.rb.consume(recs[n].RawSample)
		if err != nil {
			return n, err
		}
		if !ok {
			break
		}
	}
	return n, nil
}

func (r *Reader) readLocked(rec *Record) error {
	for {
		select {
		case <-r.closed:
			return ErrClosed
		case <-r.rb.done:
			return ErrClosed
		default:
		}
		var ok bool
		var err error
		rec.RawSample, rec.Remaining, ok, err = r.rb.consume(rec.RawSample)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if r.rb.ready() { // committed since consume looked (see ringBuf.wakes)
			continue
		}
		if err := r.wait(); err != nil {
			return err
		}
	}
}

// wait blocks until a producer wakes the reader, the deadline passes or the
// reader or ring is closed.
func (r *Reader) wait() error {
	r.deadlineMu.Lock()
	deadline := r.deadline
	r.deadlineMu.Unlock()
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		r.timer.Reset(d)
		defer r.timer.Stop()
		timeout = r.timer.C
	}
	select {
	case <-r.rb.notify:
	case <-r.kick:
	case <-r.closed:
	case <-r.rb.done:
	case <-timeout:
		return os.ErrDeadlineExceeded
	}
	return nil
}

// Dropped returns the ring's count of records that did not fit.
func (r *Reader) Dropped() uint64 { return r.rb.Dropped() }

// AvailableBytes returns the number of bytes produced and not yet read.
func (r *Reader) AvailableBytes() int { return int(r.rb.Query(RBAvailData)) }

// BufferSize returns the size of the ring's data area.
func (r *Reader) BufferSize() int { return int(r.rb.size) }
