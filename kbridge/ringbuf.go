package kbridge

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
)

// RingReader consumes a kernel BPF_MAP_TYPE_RINGBUF in batches, on top of
// cilium/ebpf's ringbuf.Reader.
//
// The kernel does not count records it could not deliver: a program's
// bpf_ringbuf_reserve or bpf_ringbuf_output simply fails when the ring is
// full. Kernel programs count their own failures in a drop counter: an
// array or per-CPU array map whose element 0 is a u64 they increment
// (atomically for an array) when reserve/output fails. Give that map as
// RingReaderOptions.Drops and Drops reports it.
type RingReader struct {
	name     string
	r        *ringbuf.Reader
	drops    *ebpf.Map
	deadline time.Time
	rec      ringbuf.Record
	records  atomic.Uint64
}

// RingReaderOptions configure NewRingReader.
type RingReaderOptions struct {
	// Drops is the kernel programs' drop counter (see RingReader); nil if
	// there is none.
	Drops *ebpf.Map
}

// NewRingReader starts consuming rb. The reader does not own rb (nor
// opts.Drops): close them after the reader.
func NewRingReader(rb *ebpf.Map, opts *RingReaderOptions) (*RingReader, error) {
	name := kernelName(rb)
	r, err := ringbuf.NewReader(rb)
	if err != nil {
		return nil, fmt.Errorf("ring buffer %q: %w", name, err)
	}
	rr := &RingReader{name: name, r: r}
	if opts != nil && opts.Drops != nil {
		switch opts.Drops.Type() {
		case ebpf.Array, ebpf.PerCPUArray:
		default:
			r.Close()
			return nil, fmt.Errorf("ring buffer %q: drop counter is a %s, want an array", name, opts.Drops.Type())
		}
		rr.drops = opts.Drops
	}
	return rr, nil
}

// SetDeadline bounds how long ReadBatch waits for the first record (the
// zero time: no bound). ReadBatch then fails with os.ErrDeadlineExceeded.
func (r *RingReader) SetDeadline(t time.Time) {
	r.deadline = t
	r.r.SetDeadline(t)
}

// ReadBatch waits for a record, then hands fn every record that is
// available without waiting, up to max (0: no limit), in order. A sample
// is valid only during the call of fn. It returns how many records fn got.
// It is not safe to call ReadBatch from several goroutines at once.
func (r *RingReader) ReadBatch(max int, fn func(sample []byte)) (int, error) {
	if err := r.r.ReadInto(&r.rec); err != nil {
		return 0, r.wrap(err)
	}
	fn(r.rec.RawSample)
	n := 1
	// Drain without blocking: a deadline in the past makes the reader
	// return what the ring holds, then os.ErrDeadlineExceeded.
	r.r.SetDeadline(time.Unix(1, 0))
	defer r.r.SetDeadline(r.deadline)
	for max == 0 || n < max {
		err := r.r.ReadInto(&r.rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			r.records.Add(uint64(n))
			return n, r.wrap(err)
		}
		fn(r.rec.RawSample)
		n++
	}
	r.records.Add(uint64(n))
	return n, nil
}

func (r *RingReader) wrap(err error) error {
	return fmt.Errorf("ring buffer %q: read: %w", r.name, err)
}

// Records returns how many records ReadBatch has delivered.
func (r *RingReader) Records() uint64 { return r.records.Load() }

// Drops returns the kernel programs' drop counter, summed over CPUs for a
// per-CPU array; 0 without one.
func (r *RingReader) Drops() (uint64, error) {
	if r.drops == nil {
		return 0, nil
	}
	if r.drops.Type() == ebpf.PerCPUArray {
		var per []uint64
		if err := r.drops.Lookup(uint32(0), &per); err != nil {
			return 0, fmt.Errorf("ring buffer %q: drop counter: %w", r.name, err)
		}
		var sum uint64
		for _, v := range per {
			sum += v
		}
		return sum, nil
	}
	var v uint64
	if err := r.drops.Lookup(uint32(0), &v); err != nil {
		return 0, fmt.Errorf("ring buffer %q: drop counter: %w", r.name, err)
	}
	return v, nil
}

// AvailableBytes returns how many bytes the kernel produced that are not
// consumed yet.
func (r *RingReader) AvailableBytes() int { return r.r.AvailableBytes() }

// Close stops the reader; a ReadBatch waiting in another goroutine returns
// os.ErrClosed.
func (r *RingReader) Close() error { return r.r.Close() }
