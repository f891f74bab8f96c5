package vm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
)

// Exec runs the program in the interpreter with the arguments, regions and
// budget set on e, and returns r0. Errors are *RunError values.
func (p *Program) Exec(e *Env) (uint64, error) {
	e.prog = p
	e.clearStatus()
	budget := e.st.Budget
	if budget == 0 {
		budget = p.budget
	}
	run := e.run
	if len(p.helpers) > 0 {
		run = e.guardedRun
	}
	own := len(e.st.Regions)
	if len(p.regions) != 0 {
		e.st.Regions = append(e.st.Regions, p.regions...)
	}
	e.st.Fixed = len(e.st.Regions)
	r0, err := run(budget)
	endRun(e, own)
	return r0, err
}

// Reasons interpret stops.
const (
	whyExit = iota + 1
	whyCall
	whyFault
	whyBudget
	whyCallDepth
	whyPacket
	whyReturn
	whyInvalid
)

// guardedRun is run for programs that can call helpers. A helper is Go
// code the embedder wrote; its panic must not take the host down with it.
// Programs without helpers run no Go code and skip the deferred recover.
func (e *Env) guardedRun(budget uint64) (r0 uint64, err error) {
	defer func() {
		if v := recover(); v != nil {
			r0, err = 0, &RunError{PC: e.helperPC, Err: fmt.Errorf("%w: %v", ErrHelperPanicked, v)}
		}
	}()
	return e.run(budget)
}

// run sets up the registers and runs the program from its first
// instruction.
func (e *Env) run(budget uint64) (uint64, error) {
	r := &e.regs
	// Registers the program has not written read as zero, not as what an
	// earlier run left.
	r[0], r[6], r[7], r[8], r[9] = 0, 0, 0, 0, 0
	r[1], r[2], r[3], r[4], r[5] = e.st.Args[0], e.st.Args[1], e.st.Args[2], e.st.Args[3], e.st.Args[4]
	r[10] = e.st.StackLo + StackSize
	for e.depth > 0 { // left by a run that failed inside a call
		e.depth--
		e.frames[e.depth].prog = nil
	}
	e.base = 0
	e.sliceStart, e.sliceLeft = 0, interpretSlice
	r0, left, err := e.drive(0, budget)
	e.st.Executed = budget - left
	return r0, err
}

// drive runs interpret from pc and does what interpret leaves to it:
// helper calls, tail calls, packet loads, building errors. It returns when
// the frame at e.base exits.
func (e *Env) drive(pc int, budget uint64) (uint64, uint64, error) {
	// interpret counts down a signed budget: one subtraction and a sign
	// test per taken jump. It gets what is left of the current slice of
	// the budget (e.sliceLeft, shared with the callbacks a helper runs),
	// so that a long run comes back here to check its time limit and
	// cancellation (see Env.sliceEnded).
	pc, left, why, chunk := e.interpretChunk(pc, budget)
	return e.stopped(pc, left, why, chunk, budget)
}

// stopped is drive after interpret, given chunk of the budget, stopped at
// pc with left of it and why.
func (e *Env) stopped(pc, left int, why uint8, chunk, budget uint64) (uint64, uint64, error) {
	r := &e.regs
	for ; ; pc, left, why, chunk = e.interpretChunk(pc, budget) {
		at := pc - 1 // the instruction that stopped the loop
		if why == whyBudget {
			// The stretch ending at `at` overdrew the chunk by -left. A
			// chunk may be shorter than what is left of the slice (a
			// lean run interprets its first one pinned to its P, see
			// Program.run); the slice ends only when the stretch overdraws
			// the slice, where interpreting the whole slice would have
			// stopped.
			used := chunk + uint64(-left)
			if used > budget {
				return 0, 0, &RunError{PC: at, Err: ErrBudgetExceeded}
			}
			budget -= used
			if used > e.sliceLeft {
				if err := e.nextSlice(); err != nil {
					return 0, budget, &RunError{PC: at, Err: err}
				}
			} else {
				e.sliceLeft -= used
			}
			pc, why = e.completeCharged(at)
		} else {
			budget -= chunk - uint64(left)
			e.sliceLeft -= chunk - uint64(left)
		}
		switch why {
		case 0: // resumed after a slice ended
		case whyReturn:
			f := &e.frames[e.depth]
			e.prog, f.prog = f.prog, nil
		case whyExit:
			return r[0], budget, nil
		case whyCall:
			in := &e.prog.code[at]
			if in.off != 0 {
				if r0, ok := callHash(e, in.op != opCallArrayLookup, r[1], r[2], r[3], r[4]); ok {
					r[0] = r0
					continue
				}
			}
			var fn HelperFunc
			if in.op != opCallX {
				fn = e.prog.funcs[in.imm]
			} else if n := r[in.dst]; n <= 1<<31-1 {
				fn = e.prog.helpers[int32(n)].Func
			}
			if fn == nil {
				return 0, budget, &RunError{PC: at, Err: ErrUnknownHelper}
			}
			e.st.BudgetLeft = budget
			e.helperPC = at
			r[0] = fn(e, r[1], r[2], r[3], r[4], r[5])
			// What the helper charged counts against the slice too, and
			// ends it when it uses it up.
			e.sliceLeft -= min(budget-e.st.BudgetLeft, e.sliceLeft)
			budget = e.st.BudgetLeft
			if e.sliceLeft == 0 && e.st.Status == 0 {
				if err := e.nextSlice(); err != nil {
					return 0, budget, &RunError{PC: at, Err: err}
				}
			}
			if e.st.Status != 0 {
				if e.st.Status&(statusTailCall|statusOverdrawn) != statusTailCall {
					r0, err := e.finish(at)
					return r0, budget, err
				}
				e.takeTailCall()
				pc = 0
			}
		case whyPacket:
			in := &e.prog.code[at]
			off := int64(int32(in.imm))
			if in.op >= opLdIndB {
				off = int64(int32(uint32(r[in.src]) + uint32(in.imm)))
			}
			v, ok := loadPacket(e.st.Packet, off, packetLoadSize[in.op])
			if !ok {
				return 0, budget, nil
			}
			r[0] = v
		case whyFault:
			return 0, budget, &RunError{PC: at, Addr: e.faultAddr, Size: e.faultSize, Err: e.faultErr}
		case whyCallDepth:
			return 0, budget, &RunError{PC: at, Err: ErrCallDepth}
		default:
			return 0, budget, &RunError{PC: at, Err: ErrUnknownOpcode}
		}
	}
}

// hashAt returns what the running program's map table says of the hash
// map at mapPtr, or nil if mapPtr is not a hash map of package maps.
func (e *Env) hashAt(mapPtr uint64) *hashMap {
	p := e.prog
	off := mapPtr - uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p.maps))))
	m := off / mapEntrySize
	if off%mapEntrySize != 0 || m >= uint64(len(p.hashes)) || p.hashes[m].keySize == 0 {
		return nil
	}
	return &p.hashes[m]
}

// lookupHash answers bpf_map_lookup_elem: the map's own lookup, and the
// value becomes a region of the run. It leaves to the helper a mapPtr that
// is not a hash map of package maps and a key that is not readable.
func (e *Env) lookupHash(mapPtr, keyAddr uint64) (r0 uint64, ok bool) {
	h := e.hashAt(mapPtr)
	if h == nil {
		return 0, false
	}
	key, ok := e.Pointer(keyAddr, h.keySize, false)
	if !ok {
		return 0, false
	}
	v := engine.HashLookup(h.h, key, e.cpu)
	if v != nil {
		e.AddRegion(v, uintptr(h.valueSize), h.writable)
	}
	return uint64(uintptr(v)), true
}

// updateHash answers bpf_map_update_elem: the map's own update, r0 = 0.
// It leaves to the helper a mapPtr that is not a hash map of package
// maps, a map read-only to programs, a key or value that is not readable
// and an update that fails (a failed update changes nothing): the helper
// tries the same and reports.
func (e *Env) updateHash(mapPtr, keyAddr, valueAddr, flags uint64) (r0 uint64, ok bool) {
	h := e.hashAt(mapPtr)
	if h == nil || !h.writable {
		return 0, false
	}
	key, ok := e.Pointer(keyAddr, h.keySize, false)
	if !ok {
		return 0, false
	}
	value, ok := e.Pointer(valueAddr, h.valueSize, false)
	if !ok {
		return 0, false
	}
	return 0, engine.HashUpdate(h.h, key, value, flags, e.cpu) == nil
}

var packetLoadSize = [...]int{opLdAbsB: 1, opLdAbsH: 2, opLdAbsW: 4, opLdIndB: 1, opLdIndH: 2, opLdIndW: 4}

// finish turns the status a helper left into the run's result.
func (e *Env) finish(pc int) (uint64, error) {
	if e.st.Status&statusOverdrawn != 0 {
		return 0, &RunError{PC: pc, Err: ErrBudgetExceeded}
	}
	if e.st.Status&statusFail != 0 {
		var re *RunError
		if errors.As(e.err, &re) { // from a callback: it names its own pc
			return 0, e.err
		}
		return 0, &RunError{PC: pc, Err: e.err}
	}
	return e.stopR0, nil
}

// fault records a failed access for run to report.
func (e *Env) fault(addr uint64, size int, err error) uint8 {
	e.faultAddr, e.faultSize, e.faultErr = addr, size, err
	return whyFault
}

// loadPacket implements LD_ABS/LD_IND: a big-endian load from the packet.
// ok is false when the load is outside the packet, which ends the run with
// r0 = 0, as in Linux.
func loadPacket(pkt []byte, off int64, size int) (uint64, bool) {
	if off < 0 || off > math.MaxInt32 || off+int64(size) > int64(len(pkt)) {
		return 0, false
	}
	b := pkt[off:]
	switch size {
	case 1:
		return uint64(b[0]), true
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), true
	default:
		return uint64(binary.BigEndian.Uint32(b)), true
	}
}

// takeTailCall switches the run to the program a helper asked for and
// returns it.
func (e *Env) takeTailCall() (*Program, unsafe.Pointer, int) {
	e.st.Status &^= statusTailCall
	if e.depth > 0 && e.frames[e.depth-1].prog == nil {
		// Remember whom the callee returns to.
		e.frames[e.depth-1].prog = e.prog
	}
	e.prog = e.tailProg
	// The target's global data becomes reachable; Exec drops these
	// regions with the run's others.
	e.st.Regions = append(e.st.Regions, e.prog.regions...)
	return e.prog, unsafe.Pointer(unsafe.SliceData(e.prog.code)), 0
}

// funcTag marks the values that lddw loads for function addresses
// (BPF_PSEUDO_FUNC), so that CallFunction can tell them from other numbers.
const funcTag = 0xfeed << 48

// CallFunction calls a function of the running program, such as the
// callback that a program passes to bpf_loop, with r1..r5 = args, and
// returns its r0. fn is the value the program loaded with lddw
// (BPF_PSEUDO_FUNC). The callback runs in a new stack frame and counts
// against the run's call depth and instruction budget. Only helpers call
// it, while the run is in progress.
func (e *Env) CallFunction(fn uint64, args [5]uint64) (uint64, error) {
	target := int(fn &^ funcTag)
	if fn&funcTag != funcTag || !slices.Contains(e.prog.callbacks, target) {
		return 0, fmt.Errorf("%w: %#x is not a function of the program", ErrInvalidCallback, fn)
	}
	if e.depth+1 >= MaxCallDepth {
		return 0, ErrCallDepth
	}
	var saved [11]uint64 // r0..r10
	copy(saved[:], e.regs[:11])
	savedBase, savedProg, depth := e.base, e.prog, e.depth
	e.depth++
	e.base = e.depth
	r := &e.regs
	r[0], r[6], r[7], r[8], r[9] = 0, 0, 0, 0, 0
	r[1], r[2], r[3], r[4], r[5] = args[0], args[1], args[2], args[3], args[4]
	r[10] = saved[10] - StackFrameSize
	r0, budget, err := e.drive(target, e.st.BudgetLeft)
	e.st.BudgetLeft = budget
	for i := depth; i < e.depth; i++ { // frames a failed callback left
		e.frames[i].prog = nil
	}
	copy(e.regs[:11], saved[:])
	e.depth, e.base, e.prog = depth, savedBase, savedProg
	return r0, err
}

// mapEntrySize is the size of an entry of a program's map table: map
// pointers are the addresses of entries.
const mapEntrySize = engine.MapEntrySize
