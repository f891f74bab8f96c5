package verifier

import (
	"bytes"
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// helperTailCall is bpf_tail_call, whose map must be a program array.
const helperTailCall = 12

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
			return 0, v.fail(ErrUnsupported, "helper %s: callbacks are not verified yet", name)
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
	if _, err := v.checkAccess(regno, r, 0, 1, fill); err != nil {
		return err
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

// checkExit returns from a function, or ends the program.
func (v *verifier) checkExit() (int, bool, error) {
	f := v.st.cur()
	r0 := &f.regs[asm.R0]
	if r0.typ == notInit {
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
