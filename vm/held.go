package vm

import "unsafe"

// Discarder takes back a record a helper reserved for a run:
// maps.RingBufMap's Discard.
type Discarder interface {
	Discard(p unsafe.Pointer, flags uint64) error
}

// heldRecord is a record a run holds: reserved, not yet committed.
type heldRecord struct {
	d Discarder
	p unsafe.Pointer
}

// Hold records that the run holds p, reserved from d by a helper
// (bpf_ringbuf_reserve), until the helper that commits it calls Unhold.
// Records a run still holds when it ends, because it failed between the
// reserve and the submit (a fault, the budget, its time limit) or because
// an unverified program never committed them, are discarded then: the
// ring's reader would otherwise wait behind them for ever.
func (e *Env) Hold(d Discarder, p unsafe.Pointer) {
	e.held = append(e.held, heldRecord{d, p})
}

// Unhold removes p from the records the run holds.
func (e *Env) Unhold(p unsafe.Pointer) {
	for i := len(e.held) - 1; i >= 0; i-- {
		if e.held[i].p == p {
			last := len(e.held) - 1
			copy(e.held[i:], e.held[i+1:])
			e.held[last] = heldRecord{}
			e.held = e.held[:last]
			return
		}
	}
}

// discardHeld discards the records a run that ended still holds.
func (e *Env) discardHeld() {
	for i := len(e.held) - 1; i >= 0; i-- {
		e.held[i].d.Discard(e.held[i].p, 0)
		e.held[i] = heldRecord{}
	}
	e.held = e.held[:0]
}
