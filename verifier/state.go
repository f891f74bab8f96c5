package verifier

import (
	"fmt"
	"strings"
)

// regType is the kind of value a register holds.
type regType uint8

const (
	notInit           regType = iota // never written: reading it is an error
	scalarValue                      // a number
	ptrCtx                           // the program's context
	ptrStack                         // a stack frame (frame says which)
	constPtrMap                      // a map reference (lddw of a map)
	ptrMapValue                      // a map value of size bytes
	ptrMapValueOrNull                // a map value, or 0
	ptrMem                           // memory a helper returned, size bytes
	ptrMemOrNull                     // the same, or 0
	ptrFunc                          // the address of a function (lddw BPF_PSEUDO_FUNC)
)

var regTypeNames = [...]string{
	notInit:           "uninit",
	scalarValue:       "scalar",
	ptrCtx:            "ctx",
	ptrStack:          "fp",
	constPtrMap:       "map_ptr",
	ptrMapValue:       "map_value",
	ptrMapValueOrNull: "map_value_or_null",
	ptrMem:            "mem",
	ptrMemOrNull:      "mem_or_null",
	ptrFunc:           "func",
}

func (t regType) String() string { return regTypeNames[t] }

func (t regType) isPointer() bool { return t >= ptrCtx }
func (t regType) orNull() bool    { return t == ptrMapValueOrNull || t == ptrMemOrNull }

// reg is the abstract value of a register or of a spilled stack slot.
//
// The fields are in an order that leaves no padding but at the end (80
// bytes, not 88): a frame is 11 of them and the verifier copies frames at
// every branch and pruning point.
type reg struct {
	// off is the value of a scalar, or a pointer's offset from the start
	// of its region (the frame pointer for the stack).
	off scalar
	// size of the region of map values and memory.
	size int64
	// mapIdx is the index in Program.Maps of a map pointer or of the map
	// whose value this points to; the function slot for ptrFunc; the frame
	// for ptrStack.
	mapIdx int
	// id links copies of one value-or-null pointer, so a null check of one
	// copy applies to all of them.
	id uint32
	// ref is the reference (acquired record) this pointer belongs to.
	ref      uint32
	typ      regType
	readOnly bool
}

func scalarReg(s scalar) reg { return reg{typ: scalarValue, off: s} }

func unknownReg() reg { return scalarReg(unknownScalar()) }

func (r *reg) String() string {
	switch r.typ {
	case notInit:
		return "uninit"
	case scalarValue:
		return r.off.String()
	case ptrStack:
		return fmt.Sprintf("fp%d%s", r.mapIdx, offString(r.off))
	case constPtrMap:
		return fmt.Sprintf("map_ptr(map%d)", r.mapIdx)
	case ptrFunc:
		return fmt.Sprintf("func(%d)", r.mapIdx)
	}
	var b strings.Builder
	b.WriteString(r.typ.String())
	b.WriteString("(")
	var parts []string
	if r.typ != ptrCtx {
		if r.typ == ptrMapValue || r.typ == ptrMapValueOrNull {
			parts = append(parts, fmt.Sprintf("map%d", r.mapIdx))
		}
		parts = append(parts, fmt.Sprintf("size=%d", r.size))
	}
	if !r.off.isConst() || r.off.value() != 0 {
		parts = append(parts, "off="+r.off.String())
	}
	if r.id != 0 {
		parts = append(parts, fmt.Sprintf("id=%d", r.id))
	}
	if r.ref != 0 {
		parts = append(parts, fmt.Sprintf("ref=%d", r.ref))
	}
	if r.readOnly {
		parts = append(parts, "rdonly")
	}
	b.WriteString(strings.Join(parts, ","))
	b.WriteString(")")
	return b.String()
}

func offString(s scalar) string {
	if s.isConst() {
		v := int64(s.value())
		if v == 0 {
			return ""
		}
		return fmt.Sprintf("%+d", v)
	}
	return "+(" + s.String() + ")"
}

// Byte kinds of a stack slot.
const (
	stackInvalid = iota // never written
	stackMisc           // some number
	stackZero           // zero
	stackSpill          // part of a spilled register
)

// slot is 8 bytes of a stack frame. A register spilled with an aligned
// 8-byte store keeps its full state in spill.
type slot struct {
	kind  [8]uint8
	spill reg
}

func (s *slot) isSpill() bool { return s.kind[0] == stackSpill }

// frame is one bpf-to-bpf call frame.
type frame struct {
	regs [11]reg
	// stack holds the slots below the frame pointer: stack[i] covers
	// bytes [-8(i+1), -8i). It grows on demand.
	stack []slot
	// callsite is the slot of the call that made this frame (-1 for the
	// entry function); the caller resumes after it.
	callsite int
	// callback is set when the frame is a callback called by a helper
	// (bpf_loop): callsite is then the helper call, and cbArg the value
	// the helper passes on in r2 every time it calls the callback.
	callback bool
	cbTarget int
	cbArg    reg
	// cbRefs are the references held when the callback was entered: it
	// must return holding the same.
	cbRefs []uint32
}

// copyFrom makes f a copy of src with its own stack and references,
// reusing the capacity of f's.
func (f *frame) copyFrom(src *frame) {
	stack, cbRefs := f.stack, f.cbRefs
	*f = *src
	f.stack = append(stack[:0], src.stack...)
	f.cbRefs = append(cbRefs[:0], src.cbRefs...)
}

// state is the abstract state of the machine at one instruction.
//
// A state belongs to one owner at a time: the path being explored, a
// path waiting in the worklist, or a visit stored at a pruning point. No
// two states share a frame or the backing array of a slice, so a state
// can be copied into one that is no longer used (arena.go).
type state struct {
	frames []*frame
	refs   []uint32 // acquired references not yet released
	// tags relate registers to their values at widened loop heads, for
	// the termination proof (loops.go).
	tags []tag
	// rels relate registers to each other (relations.go).
	rels []relation
	// home is the block holding the state.
	home *stateOne
}

func (s *state) cur() *frame { return s.frames[len(s.frames)-1] }

// stateOne is a state with its first frame: one block per state, and
// for programs that make no bpf-to-bpf call (tracepoint filters) no
// other allocation. Blocks come from the arena of the Verify call.
type stateOne struct {
	st     state
	frames [1]*frame
	f      frame
	arena  *arena // nil for a block made outside an arena
}

// clone returns a copy of s, from s's arena.
func (s *state) clone() *state {
	var a *arena
	if s.home != nil {
		a = s.home.arena
	}
	b := a.newState()
	c := &b.st
	n := len(s.frames)
	switch {
	case n == 1:
		c.frames = b.frames[:]
	case cap(c.frames) >= n:
		// The frames of an earlier use of the block, reused below:
		// that state is gone, and no state shares a frame.
		c.frames = c.frames[:n]
	default:
		c.frames = make([]*frame, n)
	}
	for i, f := range s.frames {
		switch {
		case i == 0:
			c.frames[0] = &b.f
		case c.frames[i] == nil:
			c.frames[i] = new(frame)
		}
		c.frames[i].copyFrom(f)
	}
	c.refs = append(c.refs[:0], s.refs...)
	c.tags = append(c.tags[:0], s.tags...)
	c.rels = append(c.rels[:0], s.rels...)
	return c
}

// forEachReg calls fn for every register and spilled register of every
// frame.
func (s *state) forEachReg(fn func(r *reg)) {
	for _, f := range s.frames {
		for i := range f.regs {
			fn(&f.regs[i])
		}
		for i := range f.stack {
			if f.stack[i].isSpill() {
				fn(&f.stack[i].spill)
			}
		}
	}
}

func (s *state) hasRef(ref uint32) bool {
	for _, r := range s.refs {
		if r == ref {
			return true
		}
	}
	return false
}

func (s *state) dropRef(ref uint32) {
	for i, r := range s.refs {
		if r == ref {
			s.refs = append(s.refs[:i], s.refs[i+1:]...)
			return
		}
	}
}

// String prints the registers and stack of the current frame, as the
// Linux verifier's log does.
func (s *state) String() string {
	var b strings.Builder
	for fi, f := range s.frames {
		if len(s.frames) > 1 {
			fmt.Fprintf(&b, "frame%d: ", fi)
		}
		first := true
		for i := range f.regs {
			if f.regs[i].typ == notInit {
				continue
			}
			if !first {
				b.WriteByte(' ')
			}
			first = false
			fmt.Fprintf(&b, "R%d=%s", i, f.regs[i].String())
		}
		for i := range f.stack {
			sl := &f.stack[i]
			if sl.kind == [8]uint8{} {
				continue
			}
			fmt.Fprintf(&b, " fp-%d=", 8*(i+1))
			if sl.isSpill() {
				b.WriteString(sl.spill.String())
				continue
			}
			for j := 7; j >= 0; j-- {
				b.WriteByte("?mz"[min(sl.kind[j], 2)])
			}
		}
		if fi < len(s.frames)-1 {
			b.WriteString("; ")
		}
	}
	if len(s.refs) > 0 {
		fmt.Fprintf(&b, " refs=%v", s.refs)
	}
	return b.String()
}
