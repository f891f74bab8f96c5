package tracepoint

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/filter"
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
	// fired counts the firings that no attachment counted with a record
	// (counters.fired); what the attachments did is counted by each, and
	// tally sums it.
	fired atomic.Uint64
	tally tally
	// fields are FilterFields(info), made by the first filter attached.
	fields atomic.Pointer[[]filter.Field]

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
// attached it costs one atomic load. Programs read *ev only during the
// call (a filter over the payload reads it in place, others a copy): it
// may be reused as soon as Fire returns, and must not change during it.
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
func (p *Point) Stats() Stats {
	st := p.tally.load()
	// After the attachments' counters: a firing that counts here does so
	// before anything it counts there.
	st.Fired += p.fired.Load()
	return st
}

// recordBuf is one record being built: 8-byte aligned words, so that
// programs may load 8-byte context fields aligned.
type recordBuf struct{ words []uint64 }

func newRecordBuf(size int) *recordBuf { return &recordBuf{words: make([]uint64, size/8)} }

func (b *recordBuf) ptr() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b.words)) }

// fire is the slow path of Fire: run the attachments in order, on the
// caller's payload when they only read it (Attachment.direct), else on a
// record: a copy of the payload followed by the context block.
//
// The usual case, filters in native code that drop the event, is this
// loop alone: fireRecords, the general loop, is a call away, so that this
// one has a small frame and little to spill around the filters' calls.
func (p *Point) fire(s *attachSet, payload unsafe.Pointer) {
	// Programs that run on the payload itself read it during the call
	// only, and sessions copy it: it does not escape, but escape analysis
	// cannot see through the calls to native code, and would move every
	// caller's payload to the heap.
	ev := noescape(payload)
	if !s.native {
		p.fireRecords(s, ev)
		return
	}
	if len(s.atts) == 1 {
		// One attachment, the usual case, without the loop: only p and ev
		// are kept across the call into the filter (the loop keeps five
		// words and the firing's state), a dropped event goes straight to
		// its one count, and a recorded one straight to its session.
		a := s.atts[0]
		if !a.closed.Load() {
			r0, err := uint64(1), error(nil)
			if !a.all {
				r0, err = a.jitFunc(unsafe.Slice((*byte)(ev), p.info.Size))
			}
			if r0 != 0 && err == nil && a.session != nil {
				var ts int64
				a.session.write(a, ev, nil, 0, &ts, true)
				return
			}
			if r0 != 0 || err != nil {
				var f firing
				p.kept(a, ev, r0, err, &f)
				p.countFiring(&f)
				return
			}
		}
		p.fired.Add(1)
		return
	}
	var f firing
	for _, a := range s.atts {
		if a.closed.Load() {
			continue
		}
		r0, err := uint64(1), error(nil)
		if !a.all {
			r0, err = a.jitFunc(unsafe.Slice((*byte)(ev), p.info.Size))
		}
		if r0 != 0 || err != nil {
			p.kept(a, ev, r0, err, &f)
		}
	}
	p.countFiring(&f)
}

// firing is what a Fire has done so far that the attachments after share.
type firing struct {
	// ts is the event's timestamp, read once for all the sessions that
	// record it; 0 until read.
	ts int64
	// counted: the firing is counted, in Point.fired or by a record (or
	// drop) of an attachment (slotCount.fired). It counts exactly once:
	// with its first record, in the ring's slot, where a locked add of
	// its own would be one more per recorded event; else in Point.fired,
	// before its first other count or at the end. (Stats read while
	// firings are in flight may see some of their counts and not others,
	// as they always could.)
	counted bool
	// done are the sessions that recorded (or dropped) the event: the
	// first attachment of a session that keeps an event records it, the
	// others count a match.
	done [4]*Session
	n    int
	more []*Session
}

// handled reports whether session s recorded the event already.
func (f *firing) handled(s *Session) bool {
	for _, d := range f.done[:f.n] {
		if d == s {
			return true
		}
	}
	return slices.Contains(f.more, s)
}

func (f *firing) mark(s *Session) {
	if f.n < len(f.done) {
		f.done[f.n] = s
		f.n++
		return
	}
	f.more = append(f.more, s)
}

// record has a's session record the event, once per session: the payload
// at ev, or the record rec (with the context fields filled) when one was
// built.
func (p *Point) record(a *Attachment, ev, rec unsafe.Pointer, filled needs, f *firing) {
	s := a.session
	if f.handled(s) {
		p.countFiring(f)
		a.stats.matched.Add(1)
		return
	}
	if rec == nil {
		s.write(a, ev, nil, 0, &f.ts, !f.counted)
	} else {
		s.write(a, rec, (*Context)(unsafe.Add(rec, p.ctxOffset)), collected(filled), &f.ts, !f.counted)
	}
	f.counted = true // with the record, or with its drop
	f.mark(s)
}

// collected says which costly context fields a record filled with n
// carries.
func collected(n needs) Collected {
	var c Collected
	if n&needTid != 0 {
		c |= HasVtid
	}
	if n&needGoid != 0 {
		c |= HasGoid
	}
	return c
}

// countFiring counts f in p.fired unless it is counted already: before any
// count that is not a record's.
func (p *Point) countFiring(f *firing) {
	if !f.counted {
		f.counted = true
		p.fired.Add(1)
	}
}

// fireRecords is fire's loop for attachment sets that are not all native
// code over the payload: some need a record, or run on the interpreter.
func (p *Point) fireRecords(s *attachSet, ev unsafe.Pointer) {
	var (
		b      *recordBuf // the record, built for the first attachment that needs one
		rec    unsafe.Pointer
		filled needs
		f      firing
	)
	for _, a := range s.atts {
		if a.closed.Load() {
			continue
		}
		var r0 uint64
		var err error
		switch {
		case a.jit != nil:
			// The native code's entry, through its Direct func where it
			// has one: RunPointer does not inline, and through the a.run
			// method value it costs an indirect call and a wrapper more.
			r0, err = a.jitFunc(unsafe.Slice((*byte)(ev), p.info.Size))
		case a.direct:
			r0, err = a.run(ev, uintptr(p.info.Size))
		default:
			if rec == nil {
				b, rec, filled, f.ts = p.buildRecord(ev, s.needs, f.ts)
			}
			r0, err = a.run(rec, uintptr(p.recordSize))
		}
		if err != nil {
			p.countFiring(&f)
			a.stats.errors.Add(1)
			continue
		}
		if r0 == 0 {
			continue
		}
		if a.session == nil {
			p.countFiring(&f)
			a.stats.matched.Add(1)
			continue
		}
		// A recorded or dropped event counts as matched too (counters.load):
		// one atomic add less per recorded event.
		if rec == nil && s.needs != 0 {
			// Recorded events carry the context fields some attachment
			// asked for.
			b, rec, filled, f.ts = p.buildRecord(ev, s.needs, f.ts)
		}
		p.record(a, ev, rec, filled, &f)
	}
	if b != nil {
		p.putRecord(b)
	}
	p.countFiring(&f)
}

// kept counts the result of a run of a on the payload ev that kept the
// event (or failed) and records the event if a records: the part of fire's
// short loop that runs on matches.
func (p *Point) kept(a *Attachment, ev unsafe.Pointer, r0 uint64, err error, f *firing) {
	switch {
	case err != nil:
		p.countFiring(f)
		a.stats.errors.Add(1)
	case a.session == nil:
		p.countFiring(f)
		a.stats.matched.Add(1)
	default:
		p.record(a, ev, nil, 0, f)
	}
}

// buildRecord copies the payload at ev into a record buffer and fills the
// context fields n asks for: only if some attachment reads them (a filter
// over the payload does not), and else before recording. ts is the event's
// timestamp if it was read already (0 if not): buildRecord returns it, or
// the one it read.
func (p *Point) buildRecord(ev unsafe.Pointer, n needs, ts int64) (b *recordBuf, rec unsafe.Pointer, filled needs, ts1 int64) {
	b = p.takeRecord()
	rec = b.ptr()
	copy(unsafe.Slice((*byte)(rec), p.info.Size), unsafe.Slice((*byte)(ev), p.info.Size))
	if n != 0 {
		ctx := (*Context)(unsafe.Add(rec, p.ctxOffset))
		if ts != 0 {
			fillContext(ctx, n&^needTimestamp)
			if n&needTimestamp != 0 {
				ctx.TimestampNs = uint64(ts)
			}
		} else {
			fillContext(ctx, n)
			ts = int64(ctx.TimestampNs)
		}
	}
	return b, rec, n, ts
}

// takeRecord returns a record buffer: the spare one, in one atomic swap
// where a sync.Pool costs several times more, or one from the pool when
// another firing has it.
func (p *Point) takeRecord() *recordBuf {
	if b := p.spare.Swap(nil); b != nil {
		return b
	}
	return p.bufs.Get().(*recordBuf)
}

func (p *Point) putRecord(b *recordBuf) {
	if !p.spare.CompareAndSwap(nil, b) {
		p.bufs.Put(b)
	}
}

// noescape hides p from escape analysis, as the runtime's noescape does:
// the pointer stays an unsafe.Pointer, so the garbage collector and stack
// moves see it.
//
//go:nosplit
func noescape(p unsafe.Pointer) unsafe.Pointer {
	x := uintptr(p)
	return *(*unsafe.Pointer)(unsafe.Pointer(&x))
}
