package verifier

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// helperTailCall is bpf_tail_call, whose map must be a program array.
const helperTailCall = 12

// helperLookup is bpf_map_lookup_elem.
const helperLookup = 1

// helperLoop is bpf_loop(nr_loops, callback, callback_ctx, flags), which
// calls callback(i, callback_ctx) up to 1<<23 times.
const helperLoop = 181

// maxLoops is BPF_MAX_LOOPS: the indexes bpf_loop passes are below it.
const maxLoops = 1 << 23

var argNames = [...]string{
	vm.ArgNone: "none", vm.ArgAnything: "anything", vm.ArgScalar: "scalar",
	vm.ArgMapPointer: "map pointer", vm.ArgMapKey: "pointer to a map key",
	vm.ArgMapValue: "pointer to a map value", vm.ArgMemory: "pointer to readable memory",
	vm.ArgUninitMemory: "pointer to writable memory", vm.ArgConstSize: "constant size",
	vm.ArgConstSizeOrZero: "constant size or zero", vm.ArgContext: "context pointer",
	vm.ArgFunction: "function", vm.ArgConstString: "constant string",
	vm.ArgReleasedRecord: "acquired record",
}

func argName(k vm.ArgKind) string {
	if int(k) < len(argNames) {
		return argNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}

// checkHelperCall checks a call against the helper's prototype and types r0.
func (v *verifier) checkHelperCall(ins asm.Instruction) (int, error) {
	h, ok := v.prog.Helpers()[ins.Imm]
	if !ok {
		return 0, v.fail(ErrHelperCall, "helper %d is not provided", ins.Imm)
	}
	name := h.Name
	if name == "" {
		name = fmt.Sprintf("#%d", ins.Imm)
	}
	if h.Proto == nil {
		return 0, v.fail(ErrHelperCall, "helper %s (%d) has no prototype, so calls to it cannot be verified", name, ins.Imm)
	}
	p := h.Proto
	f := v.st.cur()
	mapArg := -1 // index of the map argument, for key/value/return sizes
	memArg := -1 // the memory argument waiting for its size
	memFill := false
	var release *reg
	callback := -1 // the function argument's callee
	for i, kind := range p.Args {
		if kind == vm.ArgNone {
			break
		}
		regno := uint8(i + 1)
		r := &f.regs[regno]
		if r.typ == notInit {
			return 0, v.fail(ErrUninitialized, "helper %s argument %d (R%d) is not initialised", name, i+1, regno)
		}
		bad := func(format string, args ...any) error {
			return v.fail(ErrHelperArg, "helper %s argument %d (R%d=%s) must be a %s: %s",
				name, i+1, regno, r.String(), argName(kind), fmt.Sprintf(format, args...))
		}
		switch kind {
		case vm.ArgAnything:
		case vm.ArgScalar:
			if r.typ != scalarValue {
				return 0, bad("it is a %s", r.typ)
			}
		case vm.ArgMapPointer:
			if r.typ != constPtrMap {
				return 0, bad("it is a %s", r.typ)
			}
			mapArg = r.mapIdx
			if ins.Imm == helperTailCall {
				mi := v.maps[r.mapIdx]
				if mi.typed && mi.typ != maps.ProgramArray {
					return 0, bad("tail calls need a program array, map %d is a %v", r.mapIdx, mi.typ)
				}
			}
		case vm.ArgMapKey, vm.ArgMapValue:
			if mapArg < 0 {
				return 0, bad("no map argument precedes it")
			}
			mi := v.maps[mapArg]
			if !mi.known {
				return 0, bad("the sizes of map %d are not known", mapArg)
			}
			size := mi.keySize
			if kind == vm.ArgMapValue {
				size = mi.valueSize
			}
			if err := v.checkHelperMem(regno, r, size, false, bad); err != nil {
				return 0, err
			}
		case vm.ArgMemory, vm.ArgUninitMemory:
			memArg, memFill = i, kind == vm.ArgUninitMemory
		case vm.ArgConstSize, vm.ArgConstSizeOrZero:
			if r.typ != scalarValue {
				return 0, bad("it is a %s", r.typ)
			}
			if r.off.smin < 0 || r.off.umax > 1<<29 {
				return 0, bad("its range %s is not bounded; check it before the call", r.off.String())
			}
			if kind == vm.ArgConstSize && r.off.umin == 0 {
				return 0, bad("it may be 0")
			}
			if p.RetSizeArg == i && !r.off.isConst() {
				return 0, bad("the size of the memory returned must be a known constant")
			}
			if memArg == i-1 && memArg >= 0 {
				mr := &f.regs[memArg+1]
				mbad := func(format string, args ...any) error {
					return v.fail(ErrHelperArg, "helper %s argument %d (R%d=%s) must point to %d bytes of %s memory: %s",
						name, memArg+1, memArg+1, mr.String(), r.off.umax, map[bool]string{true: "writable", false: "readable"}[memFill],
						fmt.Sprintf(format, args...))
				}
				if kind == vm.ArgConstSizeOrZero && r.off.umax == 0 && mr.typ == scalarValue && mr.off.isConst() && mr.off.value() == 0 {
					memArg = -1
					break
				}
				if err := v.checkHelperMem(uint8(memArg+1), mr, int64(r.off.umax), memFill, mbad); err != nil {
					return 0, err
				}
				if memFill && mr.typ == ptrStack {
					// The helper writes at least umin bytes.
					a, _ := v.checkAccess(uint8(memArg+1), mr, 0, int(r.off.umax), true)
					if err := v.checkStackRange(a.frame, a.off, int64(r.off.umin), true); err != nil {
						return 0, err
					}
				}
				memArg = -1
			}
		case vm.ArgContext:
			if r.typ != ptrCtx || !r.off.isConst() || r.off.value() != 0 {
				return 0, bad("it is a %s", r.String())
			}
		case vm.ArgFunction:
			if ins.Imm != helperLoop {
				return 0, v.fail(ErrUnsupported, "helper %s: only bpf_loop callbacks are verified", name)
			}
			if r.typ != ptrFunc {
				return 0, bad("it is a %s; pass a function of the program", r.String())
			}
			callback = r.mapIdx
		case vm.ArgConstString:
			if err := v.checkConstString(r, bad); err != nil {
				return 0, err
			}
		case vm.ArgReleasedRecord:
			if r.typ != ptrMem || r.ref == 0 {
				return 0, bad("it is a %s, not a record from a reserve call that was checked against null", r.String())
			}
			if !r.off.isConst() || r.off.value() != 0 {
				return 0, bad("it points inside the record (offset %s), pass the pointer the reserve call returned", r.off.String())
			}
			release = r
		default:
			return 0, bad("unknown argument kind")
		}
		if memArg >= 0 && memArg != i {
			return 0, v.fail(ErrHelperArg, "helper %s argument %d: memory without a size argument after it", name, memArg+1)
		}
	}
	if memArg >= 0 {
		return 0, v.fail(ErrHelperArg, "helper %s argument %d: memory without a size argument after it", name, memArg+1)
	}
	if ins.Imm == helperTailCall && len(v.st.refs) > 0 {
		return 0, v.fail(ErrReferenceLeak, "tail call while holding references %v; submit or discard them first", v.st.refs)
	}
	if release != nil {
		ref := release.ref
		v.st.dropRef(ref)
		v.st.forEachReg(func(r *reg) {
			if r.ref == ref {
				*r = reg{}
			}
		})
	}

	if callback >= 0 {
		return v.enterCallback(callback, f.regs[asm.R3])
	}

	// The result.
	var r0 reg
	switch p.Ret {
	case vm.RetInteger:
		r0 = unknownReg()
	case vm.RetVoid:
	case vm.RetMapValueOrNull:
		if mapArg < 0 {
			return 0, v.fail(ErrHelperCall, "helper %s returns a map value but takes no map", name)
		}
		mi := v.maps[mapArg]
		if !mi.known {
			return 0, v.fail(ErrHelperCall, "helper %s: the value size of map %d is not known", name, mapArg)
		}
		r0 = reg{typ: ptrMapValueOrNull, off: constScalar(0), size: mi.valueSize, mapIdx: mapArg, id: v.newID(), readOnly: mi.readOnly}
		if ins.Imm == helperLookup && v.inBoundsArrayKey(mi, &f.regs[asm.R2]) {
			// An array has every key below max_entries: the lookup
			// cannot fail (as Linux's can_elide_value_nullness).
			r0.typ, r0.id = ptrMapValue, 0
		}
	case vm.RetMemoryOrNull, vm.RetAcquiredRecordOrNull:
		size := int64(p.RetSize)
		if p.RetSizeArg >= 0 {
			sr := &f.regs[p.RetSizeArg+1]
			if sr.typ != scalarValue || !sr.off.isConst() {
				return 0, v.fail(ErrHelperArg, "helper %s: the size argument %d must be a known constant", name, p.RetSizeArg+1)
			}
			size = int64(sr.off.value())
		}
		r0 = reg{typ: ptrMemOrNull, off: constScalar(0), size: size, id: v.newID()}
		if p.Ret == vm.RetAcquiredRecordOrNull {
			r0.ref = r0.id
			v.st.refs = append(v.st.refs, r0.ref)
		}
	default:
		return 0, v.fail(ErrHelperCall, "helper %s: unknown return kind %d", name, p.Ret)
	}
	for r := asm.R1; r <= asm.R5; r++ {
		f.regs[r] = reg{}
	}
	f.regs[asm.R0] = r0
	return v.pc + 1, nil
}

// inBoundsArrayKey reports whether key points to a known key of an array
// map below its max_entries.
func (v *verifier) inBoundsArrayKey(mi mapInfo, key *reg) bool {
	if !mi.typed || (mi.typ != maps.Array && mi.typ != maps.PerCPUArray) || mi.keySize != 4 {
		return false
	}
	if key.typ != ptrStack || !key.off.isConst() {
		return false
	}
	o := int64(key.off.value())
	if o < -vm.StackFrameSize || o+4 > 0 {
		return false
	}
	k, ok := v.stackConst(key.mapIdx, o, 4)
	return ok && k < mi.maxEntries
}

// stackConst returns the number size bytes at o in frame fi hold, if it
// is known: zeros, or the low bytes of a spilled constant.
func (v *verifier) stackConst(fi int, o int64, size int) (uint64, bool) {
	sl, b := v.stackSlot(fi, o)
	if sl.isSpill() && b+size <= 8 {
		if sl.spill.typ != scalarValue || !sl.spill.off.isConst() {
			return 0, false
		}
		return sl.spill.off.value() >> (8 * b) & (1<<(8*size) - 1), true
	}
	for i := int64(0); i < int64(size); i++ {
		sl, b := v.stackSlot(fi, o+i)
		if sl.kind[b] != stackZero {
			return 0, false
		}
	}
	return 0, true
}

// checkHelperMem proves that a helper may read (or, with fill, write) size
// bytes at r.
func (v *verifier) checkHelperMem(regno uint8, r *reg, size int64, fill bool, bad func(string, ...any) error) error {
	switch r.typ {
	case ptrStack, ptrMapValue, ptrMem, ptrCtx:
	case ptrMapValueOrNull, ptrMemOrNull:
		return v.fail(ErrNullPointer, "R%d is a %s: compare it with 0 before passing it to a helper", regno, r.typ)
	default:
		return bad("it is a %s", r.typ)
	}
	if size == 0 {
		return nil
	}
	if size > 1<<29 {
		return bad("size %d too large", size)
	}
	// Check the first and the last byte: the regions are contiguous.
	if a, err := v.checkAccess(regno, r, 0, 1, fill); err != nil {
		return err
	} else if a.variable {
		return v.fail(ErrInvalidAccess, "R%d: helper memory at a variable stack offset (%s); pass a constant offset", regno, r.String())
	}
	if size > 1<<15 {
		return bad("size %d too large", size)
	}
	a, err := v.checkAccess(regno, r, int16(size-1), 1, fill)
	if err != nil {
		return err
	}
	if r.typ == ptrStack && !fill {
		return v.checkStackRange(a.frame, a.off-(size-1), size, false)
	}
	if !fill && r.typ != ptrStack && !v.opts.AllowPointerLeaks {
		return nil
	}
	return nil
}

// checkConstString proves that r points to a NUL-terminated string in
// read-only map memory.
func (v *verifier) checkConstString(r *reg, bad func(string, ...any) error) error {
	if r.typ != ptrMapValue || !r.readOnly {
		return bad("it is a %s, not a pointer into a read-only map", r.String())
	}
	if !r.off.isConst() {
		return bad("variable offset %s", r.off.String())
	}
	mi := v.maps[r.mapIdx]
	off := int64(r.off.value())
	if !mi.hasDirect || off < 0 || off >= int64(len(mi.direct)) {
		return bad("offset %d outside the map's memory", off)
	}
	if bytes.IndexByte(mi.direct[off:], 0) < 0 {
		return bad("no NUL byte after offset %d", off)
	}
	return nil
}

// checkLocalCall enters a bpf-to-bpf call: a new frame whose r1-r5 are the
// caller's.
func (v *verifier) checkLocalCall(ins asm.Instruction) (int, bool, error) {
	if len(v.st.frames) >= vm.MaxCallDepth {
		return 0, false, v.fail(ErrInvalidCall, "call depth exceeds %d frames", vm.MaxCallDepth)
	}
	caller := v.st.cur()
	callee := &frame{callsite: v.pc}
	for r := asm.R1; r <= asm.R5; r++ {
		callee.regs[r] = caller.regs[r]
	}
	callee.regs[asm.R10] = reg{typ: ptrStack, off: constScalar(0), mapIdx: len(v.st.frames)}
	v.st.frames = append(v.st.frames, callee)
	v.maxDepth = max(v.maxDepth, len(v.st.frames))
	return v.pc + 1 + int(ins.Imm), false, nil
}

// enterCallback checks a bpf_loop call: the helper may return at once
// (flags or nr_loops refused, or 0 iterations), so the caller's state
// after the call is queued; and it may call the callback, whose frame the
// current path enters. Every return from the callback goes both back to
// the caller and into the callback again (checkCallbackExit).
func (v *verifier) enterCallback(target int, arg reg) (int, error) {
	if len(v.st.frames) >= vm.MaxCallDepth {
		return 0, v.fail(ErrInvalidCall, "call depth exceeds %d frames with the callback", vm.MaxCallDepth)
	}
	after := v.st.clone()
	helperReturn(after.cur())
	v.branch(after, v.pc+1)
	v.pushCallback(v.st, v.pc, target, arg)
	return target, nil
}

// helperReturn sets a frame's registers after a helper call returning a
// number.
func helperReturn(f *frame) {
	for r := asm.R1; r <= asm.R5; r++ {
		f.regs[r] = reg{}
	}
	f.regs[asm.R0] = unknownReg()
}

// pushCallback adds the frame of a call of the callback at target by the
// helper call at callsite.
func (v *verifier) pushCallback(st *state, callsite, target int, arg reg) {
	f := &frame{callsite: callsite, callback: true, cbTarget: target, cbArg: arg, cbRefs: append([]uint32(nil), st.refs...)}
	f.regs[asm.R1] = scalarReg(rangeScalar(0, maxLoops-1))
	f.regs[asm.R2] = arg
	f.regs[asm.R10] = reg{typ: ptrStack, off: constScalar(0), mapIdx: len(st.frames)}
	st.frames = append(st.frames, f)
	v.maxDepth = max(v.maxDepth, len(st.frames))
}

// checkCallbackExit returns from a bpf_loop callback. r0 must be 0
// (continue) or 1 (stop). The path continues in the caller after the
// helper call; another call of the callback is queued unless a state
// already explored, or being explored on this path, at the callback's
// entry covers it. That cannot hide an endless loop: bpf_loop bounds the
// calls itself.
func (v *verifier) checkCallbackExit(f *frame, r0 *reg) (int, bool, error) {
	if r0.typ != scalarValue {
		return 0, false, v.fail(ErrInvalidReturn, "a callback must return 0 or 1, R0 is a %s", r0.typ)
	}
	if r0.off.umax > 1 {
		return 0, false, v.fail(ErrInvalidReturn, "a callback must return 0 or 1, R0=%s", r0.off.String())
	}
	if !slices.Equal(v.st.refs, f.cbRefs) {
		return 0, false, v.fail(ErrReferenceLeak, "the callback returns holding references %v, it was called with %v; release what it acquires", v.st.refs, f.cbRefs)
	}
	depth := len(v.st.frames) - 1
	var leak error
	v.st.frames = v.st.frames[:depth]
	v.st.forEachReg(func(r *reg) {
		if r.typ == ptrStack && r.mapIdx == depth && leak == nil {
			leak = v.fail(ErrPointerLeak, "a pointer to the callback's stack (%s) outlives it", r.String())
		}
	})
	if leak != nil {
		return 0, false, leak
	}
	target := f.cbTarget
	again := v.st.clone()
	v.pushCallback(again, f.callsite, target, f.cbArg)
	v.widenCallback(again, target)
	if !v.covered(again, target) {
		if v.opts.Log != nil {
			fmt.Fprintf(v.opts.Log, "%d: callback called again: %s\n", target, again)
		}
		if v.cur != nil {
			v.cur.branches++
		}
		v.work = append(v.work, pending{st: again, pc: target, parent: v.cur, reentry: true})
	}
	helperReturn(v.st.cur())
	return f.callsite + 1, false, nil
}

// widenCallback forgets the numbers spilled in the callers' stacks that
// changed since the callback was last entered on this path (a counter
// the callback increments, say), so that the states of the calls meet
// after a few rounds instead of one per possible iteration.
func (v *verifier) widenCallback(st *state, pc int) {
	var prev *state
	for _, old := range v.visits[pc] {
		if len(old.st.frames) == len(st.frames) && v.onPath(old) {
			prev = old.st
		}
	}
	if prev == nil {
		return
	}
	for fi := 0; fi < len(st.frames)-1; fi++ {
		cf, pf := st.frames[fi], prev.frames[fi]
		for i := range cf.stack {
			cs := &cf.stack[i]
			if !cs.isSpill() || cs.spill.typ != scalarValue || i >= len(pf.stack) {
				continue
			}
			ps := &pf.stack[i]
			if !ps.isSpill() || ps.spill.typ != scalarValue || ps.spill.off != cs.spill.off {
				cs.spill.off = unknownScalar()
			}
		}
	}
}

// covered reports whether a state stored at pc, finished or on the
// current path, subsumes st.
func (v *verifier) covered(st *state, pc int) bool {
	for _, old := range v.visits[pc] {
		// A finished state must carry the tags of loops in progress
		// it was proved under (loops.go), as in checkpoint.
		finished := old.branches == 0 && tagsCover(old.st.tags, st.tags, 0)
		if (finished || v.onPath(old)) && subsumes(old.st, st, v.live[pc], v.rel[pc]) {
			old.hits++
			return true
		}
	}
	return false
}

// checkExit returns from a function, or ends the program.
func (v *verifier) checkExit() (int, bool, error) {
	f := v.st.cur()
	r0 := &f.regs[asm.R0]
	if f.callback {
		return v.checkCallbackExit(f, r0)
	}
	if r0.typ == notInit && len(v.st.frames) == 1 {
		// A function may return nothing (void): the caller must not
		// read R0 then.
		return 0, false, v.fail(ErrUninitialized, "R0 is not set before exit")
	}
	if len(v.st.frames) == 1 {
		if r0.typ != scalarValue && !v.opts.AllowPointerLeaks {
			return 0, false, v.fail(ErrPointerLeak, "the program returns a pointer (R0=%s)", r0.String())
		}
		if len(v.st.refs) > 0 {
			return 0, false, v.fail(ErrReferenceLeak, "references %v are not released on this path; submit or discard every reserved record", v.st.refs)
		}
		return 0, true, nil
	}
	depth := len(v.st.frames) - 1
	var leak error
	v.st.frames = v.st.frames[:depth]
	v.st.forEachReg(func(r *reg) {
		if r.typ == ptrStack && r.mapIdx == depth && leak == nil {
			leak = v.fail(ErrPointerLeak, "a pointer to the returning function's stack (%s) outlives it", r.String())
		}
	})
	if r0.typ == ptrStack && r0.mapIdx == depth {
		v.st.frames = append(v.st.frames, f)
		return 0, false, v.fail(ErrPointerLeak, "the function returns a pointer to its own stack (R0=%s)", r0.String())
	}
	if leak != nil {
		return 0, false, leak
	}
	caller := v.st.cur()
	caller.regs[asm.R0] = *r0
	for r := asm.R1; r <= asm.R5; r++ {
		caller.regs[r] = reg{}
	}
	return f.callsite + 1, false, nil
}
