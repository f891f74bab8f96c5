package tracepoint

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/jit"
)

// Link is what every attachment returns: closing it detaches. Future attach
// points (uprobes, kernel programs) return the same shape.
type Link interface {
	Close() error
}

// runFunc runs one attached program on a record and returns r0.
type runFunc func(rec unsafe.Pointer, size uintptr) (uint64, error)

// attachSet is the immutable list of attachments of a tracepoint, replaced
// whole (copy on write) on every attach and detach.
type attachSet struct {
	atts  []*Attachment
	needs needs // context fields some attachment reads
	// native: every attachment is native code that runs on the payload
	// (Attachment.jit) or records every event (Attachment.all), and none
	// reads the context, so that firings take the short loop of fire.
	native bool
}

// Attachment is a program attached to a tracepoint, alone (Attach) or
// recording into a session (Session.Enable). It is a Link.
type Attachment struct {
	point *Point
	run   runFunc
	// direct: the program reads only the payload and writes nothing (as
	// the verifier proved for a context of the payload's size, read-only),
	// and no Go code runs with its context (so a payload on the firing
	// goroutine's stack cannot move under it): it runs on the caller's
	// payload, without the copy into a record. jit is then its native
	// code, if it has some.
	direct bool
	jit    *jit.Program
	// jitFunc runs jit: its Direct func where it has one, the cheapest
	// call, else its Run.
	jitFunc func([]byte) (uint64, error)
	// all: the attachment has no program: it records every event.
	all     bool
	needs   needs
	session *Session
	// slot is the attachment's counters in its session's rings, tag its
	// records' tag (its tracepoint's layout index there).
	slot   int
	tag    uint32
	closed atomic.Bool
	// stats are the attachment's counters, which its tracepoint's and
	// session's figures sum (tally): a separate object, which outlives
	// the attachment until its cleanup folds it into the sums.
	stats *counters
	// keep holds what run uses (a program, native code), so that it lives
	// as long as the attachment: a Fire in flight may still run it after
	// Close.
	keep any
	desc string
	expr string // the filter's, if it is one
}

// ErrNoProgram reports Attach without a program to run.
var ErrNoProgram = errors.New("no program: use Filter, Program or VMProgram")

// Attach runs a program on every firing of tp until the returned
// attachment is closed. The program is given by one option (Filter,
// Program, VMProgram); its return value counts the event as matched
// (non-zero) or not. To record events, use Session.Enable.
func Attach(tp Target, opts ...Option) (*Attachment, error) {
	return attach(tp.point(), nil, opts)
}

// attach builds an attachment from opts and adds it to p.
func attach(p *Point, s *Session, opts []Option) (*Attachment, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.sources) > 1 {
		return nil, fmt.Errorf("tracepoint %s: %d programs in one attachment: give one of Filter, Program, VMProgram", p.Name(), len(cfg.sources))
	}
	a := &Attachment{point: p, session: s, needs: cfg.needs, stats: new(counters)}
	if len(cfg.sources) == 0 {
		if s == nil {
			return nil, fmt.Errorf("tracepoint %s: %w", p.Name(), ErrNoProgram)
		}
		a.run, a.desc, a.direct, a.all = keepAll, "all events", true, true
	} else if err := cfg.sources[0](p, a, &cfg); err != nil {
		return nil, fmt.Errorf("tracepoint %s: %w", p.Name(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s != nil {
		if err := s.add(p, a); err != nil {
			return nil, fmt.Errorf("tracepoint %s: %w", p.Name(), err)
		}
		a.stats.session, a.stats.slot = s, a.slot
	}
	// Counted by the tracepoint (and the session) from now on, and until
	// nothing reaches a: then no Fire can count into a.stats any more.
	p.tally.add(a.stats)
	if s != nil {
		s.tally.add(a.stats)
	}
	runtime.AddCleanup(a, foldTallies, tallies{point: &p.tally, c: a.stats})
	p.publish(append(p.current(), a))
	return a, nil
}

// keepAll is the program of an attachment without one: record everything.
func keepAll(unsafe.Pointer, uintptr) (uint64, error) { return 1, nil }

// current returns a copy of the attachments in place, to change and
// publish: firing goroutines may be reading the published one. Caller holds
// p.mu.
func (p *Point) current() []*Attachment {
	if s := p.active.Load(); s != nil {
		return slices.Clone(s.atts)
	}
	return nil
}

// publish makes atts the attachments of p (nil when empty, so that Fire
// stays one load). Caller holds p.mu.
func (p *Point) publish(atts []*Attachment) {
	if len(atts) == 0 {
		p.active.Store(nil)
		return
	}
	s := &attachSet{atts: atts, native: true}
	for _, a := range atts {
		s.needs |= a.needs
		s.native = s.native && (a.jit != nil || a.all)
	}
	s.native = s.native && s.needs == 0
	p.active.Store(s)
}

// Close detaches the program. A Fire that starts after Close returns does
// not run it; one already running may. Close is idempotent.
func (a *Attachment) Close() error {
	if a.closed.Swap(true) {
		return nil
	}
	p := a.point
	p.mu.Lock()
	atts := slices.DeleteFunc(p.current(), func(b *Attachment) bool { return b == a })
	p.publish(atts)
	p.mu.Unlock()
	if a.session != nil {
		a.session.remove(a)
	}
	return nil
}

// Stats returns the attachment's counters. Fired is counted per
// tracepoint only (Point.Stats), to spare firings one atomic add per
// attachment.
func (a *Attachment) Stats() Stats { return a.stats.load() }

// Tracepoint returns the tracepoint the program is attached to.
func (a *Attachment) Tracepoint() *Point { return a.point }

// String says what runs where, for logs.
func (a *Attachment) String() string {
	if a.expr != "" {
		return fmt.Sprintf("%s: filter %q %s", a.point.Name(), a.expr, a.desc)
	}
	return a.point.Name() + ": " + a.desc
}
