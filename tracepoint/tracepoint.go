package tracepoint

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Tracepoint is a declared tracepoint with payload type T. Declare it once,
// in a package-level variable, and Fire it where the event happens.
type Tracepoint[T any] struct {
	Point
}

// Point is the untyped side of a tracepoint, what attaching, sessions and
// the registry work with. A *Tracepoint[T] is a Target through its Point.
type Point struct {
	// active is nil while nothing is attached: the one load of Fire.
	active atomic.Pointer[attachSet]

	info       Info
	typ        reflect.Type
	id         uint32
	recordSize int
	ctxOffset  int
	// spare is a record buffer ready for the next firing: one atomic swap
	// where a sync.Pool costs several times more; bufs serves the firings
	// that find it taken.
	spare atomic.Pointer[recordBuf]
	bufs  sync.Pool // *recordBuf
	stats counters

	// mu serializes attaching and detaching, which copy active.
	mu sync.Mutex
}

// Target is anything attachments accept as a tracepoint: *Point and every
// *Tracepoint[T].
type Target interface {
	point() *Point
}

func (p *Point) point() *Point { return p }

// Info describes a tracepoint's payload, for headers and filters.
type Info struct {
	Provider string
	Name     string
	// Size and Align are the payload's, as C sees them.
	Size  int
	Align int
	// Fields are the payload's named fields, in order.
	Fields []Field
}

// FullName is "provider:name".
func (i Info) FullName() string { return i.Provider + ":" + i.Name }

// Section is the ELF section of C programs for the tracepoint,
// "uebpf/tracepoint/<provider>/<name>".
func (i Info) Section() string { return "uebpf/tracepoint/" + i.Provider + "/" + i.Name }

// ContextOffset is where the context block starts in a record: the payload
// size rounded up to 8.
func (i Info) ContextOffset() int { return roundUp8(i.Size) }

// RecordSize is the size of what programs see at r1: the payload, padding
// and the context block.
func (i Info) RecordSize() int { return i.ContextOffset() + ContextSize }

// RecordFields lists the payload's fields and the context block's, with
// offsets from the start of the record: the fields a filter may name.
func (i Info) RecordFields() []Field {
	fs := append([]Field(nil), i.Fields...)
	for _, f := range ContextFields() {
		f.Offset += i.ContextOffset()
		fs = append(fs, f)
	}
	return fs
}

// New declares the tracepoint provider:name with payload T and registers
// it. It panics if T has no fixed C-compatible layout or the name is taken
// or not made of C identifiers: declarations run at init, where that is a
// programming error. Declare returns the error instead.
func New[T any](provider, name string) *Tracepoint[T] {
	tp, err := Declare[T](provider, name)
	if err != nil {
		panic(err)
	}
	return tp
}

// Declare is New returning an error.
func Declare[T any](provider, name string) (*Tracepoint[T], error) {
	t := reflect.TypeFor[T]()
	fields, size, align, err := describe(t)
	if err != nil {
		return nil, fmt.Errorf("tracepoint %s:%s: %w", provider, name, err)
	}
	tp := &Tracepoint[T]{}
	p := &tp.Point
	p.info = Info{Provider: provider, Name: name, Size: size, Align: align, Fields: fields}
	p.typ = t
	p.recordSize = p.info.RecordSize()
	p.ctxOffset = p.info.ContextOffset()
	p.bufs.New = func() any { return newRecordBuf(p.recordSize) }
	if err := register(p); err != nil {
		return nil, err
	}
	return tp, nil
}

// Fire runs the programs attached to the tracepoint on *ev. With nothing
// attached it costs one atomic load. ev is copied before any program sees
// it and may be reused as soon as Fire returns.
func (t *Tracepoint[T]) Fire(ev *T) {
	if s := t.active.Load(); s != nil {
		t.fire(s, unsafe.Pointer(ev))
	}
}

// FireValue is Fire with the payload passed by value, kept for comparison
// in benchmarks: the copy at the call site makes it cost more than Fire
// with nothing attached.
func (t *Tracepoint[T]) FireValue(ev T) {
	if s := t.active.Load(); s != nil {
		t.fire(s, unsafe.Pointer(&ev))
	}
}

// Enabled reports whether anything is attached, for call sites that would
// spend time building the payload.
func (t *Tracepoint[T]) Enabled() bool { return t.active.Load() != nil }

// Info describes the tracepoint.
func (p *Point) Info() Info { return p.info }

// Name is "provider:name".
func (p *Point) Name() string { return p.info.FullName() }

// PayloadType is the Go type of the payload.
func (p *Point) PayloadType() reflect.Type { return p.typ }

// Stats returns the tracepoint's counters.
func (p *Point) Stats() Stats { return p.stats.load() }

// recordBuf is one record being built: 8-byte aligned words, so that
// programs may load 8-byte context fields aligned.
type recordBuf struct{ words []uint64 }

func newRecordBuf(size int) *recordBuf { return &recordBuf{words: make([]uint64, size/8)} }

func (b *recordBuf) ptr() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b.words)) }

// fire is the slow path of Fire: copy the payload into a record, fill the
// context block and run the attachments in order. payload is only read
// here, so that it does not escape from the callers of Fire.
func (p *Point) fire(s *attachSet, payload unsafe.Pointer) {
	p.stats.fired.Add(1)
	b := p.spare.Swap(nil)
	if b == nil {
		b = p.bufs.Get().(*recordBuf)
	}
	rec := b.ptr()
	copy(unsafe.Slice((*byte)(rec), p.info.Size), unsafe.Slice((*byte)(payload), p.info.Size))
	ctx := (*Context)(unsafe.Add(rec, p.ctxOffset))
	// The context block is filled only if some attachment reads it
	// (a filter over the payload does not), and else before recording.
	filled := s.needs
	if filled != 0 {
		fillContext(ctx, filled)
	}
	for _, a := range s.atts {
		if a.closed.Load() {
			continue
		}
		r0, err := a.run(rec, uintptr(p.recordSize))
		if err != nil {
			a.stats.errors.Add(1)
			p.stats.errors.Add(1)
			continue
		}
		if r0 == 0 {
			continue
		}
		a.stats.matched.Add(1)
		p.stats.matched.Add(1)
		if a.session == nil {
			continue
		}
		if filled&needTimestamp == 0 {
			if filled == 0 {
				fillContext(ctx, needTimestamp)
			} else {
				ctx.TimestampNs = uint64(nanotime())
			}
			filled |= needStatic | needTimestamp
		}
		if a.session.record(p, rec) {
			a.stats.recorded.Add(1)
			p.stats.recorded.Add(1)
		} else {
			a.stats.dropped.Add(1)
			p.stats.dropped.Add(1)
		}
	}
	if !p.spare.CompareAndSwap(nil, b) {
		p.bufs.Put(b)
	}
}
