package verifier

import (
	"math"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

var sizeBytes = map[uint8]int{asm.SizeB: 1, asm.SizeH: 2, asm.SizeW: 4, asm.SizeDW: 8}

// access is a checked memory access: the region and the offset in it.
type access struct {
	typ   regType
	frame int   // for the stack
	off   int64 // constant offset, for the stack and the context
	// variable is set for a stack access at a variable offset: it may
	// touch any byte of [off, end).
	variable bool
	end      int64
}

// checkAccess proves that size bytes at ptr+off are inside ptr's region.
func (v *verifier) checkAccess(regno uint8, ptr *reg, off int16, size int, write bool) (access, error) {
	a := access{typ: ptr.typ}
	what := "read"
	if write {
		what = "write"
	}
	switch ptr.typ {
	case notInit:
		return a, v.fail(ErrUninitialized, "R%d is read before it is written", regno)
	case scalarValue:
		return a, v.fail(ErrInvalidAccess, "R%d is a number (%s), not a pointer: %s of %d bytes refused", regno, ptr.off.String(), what, size)
	case ptrMapValueOrNull, ptrMemOrNull:
		return a, v.fail(ErrNullPointer, "R%d is a %s: compare it with 0 before the %s", regno, ptr.typ, what)
	case constPtrMap, ptrFunc:
		return a, v.fail(ErrInvalidAccess, "R%d is a %s, which cannot be dereferenced", regno, ptr.typ)
	case ptrCtx:
		if !ptr.off.isConst() {
			// A bounded variable offset (a loop over the context) may
			// touch any byte of its range; the context is plain memory.
			if ptr.off.umax > 1<<31 {
				return a, v.fail(ErrInvalidAccess, "R%d: context access with a variable offset (%s) not bounded to the context; check it first", regno, ptr.off.String())
			}
			lo, hi := int64(ptr.off.umin)+int64(off), int64(ptr.off.umax)+int64(off)+int64(size)
			if lo < 0 || hi > int64(v.opts.ContextSize) {
				return a, v.fail(ErrOutOfBounds, "context %s of %d bytes at offset %d..%d (R%d=%s), the context has %d bytes",
					what, size, lo, hi-int64(size), regno, ptr.off.String(), v.opts.ContextSize)
			}
			if write && v.opts.ContextReadOnly {
				return a, v.fail(ErrReadOnly, "the context is read-only: write of %d bytes at offset %d..%d", size, lo, hi-int64(size))
			}
			a.off = lo
			return a, nil
		}
		o := int64(ptr.off.value()) + int64(off)
		if o < 0 || o+int64(size) > int64(v.opts.ContextSize) || int64(ptr.off.value()) < -(1<<31) || int64(ptr.off.value()) > 1<<31 {
			return a, v.fail(ErrOutOfBounds, "context %s of %d bytes at offset %d, the context has %d bytes", what, size, o, v.opts.ContextSize)
		}
		if write && v.opts.ContextReadOnly {
			return a, v.fail(ErrReadOnly, "the context is read-only: write of %d bytes at offset %d", size, o)
		}
		a.off = o
	case ptrStack:
		if !ptr.off.isConst() {
			// A bounded variable offset may touch any byte of its range.
			lo, hi := ptr.off.smin+int64(off), ptr.off.smax+int64(off)+int64(size)
			if ptr.off.smin < -vm.StackFrameSize || ptr.off.smax > vm.StackFrameSize {
				return a, v.fail(ErrInvalidAccess, "R%d: stack access with a variable offset (%s) not bounded to the frame; check it first", regno, ptr.off.String())
			}
			if lo < -vm.StackFrameSize || hi > 0 {
				return a, v.fail(ErrOutOfBounds, "stack %s of %d bytes at fp%+d..fp%+d (R%d=%s), outside the frame [-%d, 0)",
					what, size, lo, hi-int64(size), regno, ptr.off.String(), vm.StackFrameSize)
			}
			a.frame, a.off, a.end, a.variable = ptr.mapIdx, lo, hi, true
			return a, nil
		}
		base := int64(ptr.off.value())
		o := base + int64(off)
		if base < -vm.StackFrameSize || base > vm.StackFrameSize || o < -vm.StackFrameSize || o+int64(size) > 0 {
			return a, v.fail(ErrOutOfBounds, "stack %s of %d bytes at fp%+d, outside the frame [-%d, 0)", what, size, o, vm.StackFrameSize)
		}
		a.frame, a.off = ptr.mapIdx, o
	case ptrMapValue, ptrMem:
		const limit = 1 << 40
		if ptr.off.smin < -limit || ptr.off.smax > limit {
			return a, v.fail(ErrOutOfBounds, "R%d: %s offset %s is unbounded; check it against the size first", regno, ptr.typ, ptr.off.String())
		}
		lo, hi := ptr.off.smin+int64(off), ptr.off.smax+int64(off)+int64(size)
		if lo < 0 || hi > ptr.size {
			region := "map value"
			if ptr.typ == ptrMem {
				region = "memory"
			}
			if ptr.off.isConst() {
				return a, v.fail(ErrOutOfBounds, "%s %s of %d bytes at offset %d, the %s has %d bytes", region, what, size, lo, region, ptr.size)
			}
			return a, v.fail(ErrOutOfBounds, "%s %s of %d bytes at offset %d..%d (R%d=%s), the %s has %d bytes; bound the offset first",
				region, what, size, lo, hi-int64(size), regno, ptr.off.String(), region, ptr.size)
		}
		if write && ptr.readOnly {
			return a, v.fail(ErrReadOnly, "R%d points into a read-only map value", regno)
		}
	default:
		return a, v.fail(ErrInvalidAccess, "R%d: invalid pointer", regno)
	}
	return a, nil
}

// loadedScalar is the value of a load of size bytes from non-stack memory.
func loadedScalar(size int, signed bool) scalar {
	if size == 8 {
		return unknownScalar()
	}
	if signed {
		s := unknownScalar()
		s.smin, s.smax = -(int64(1) << (8*size - 1)), int64(1)<<(8*size-1)-1
		s.sync()
		return s
	}
	return rangeScalar(0, 1<<(8*size)-1)
}

func (v *verifier) checkLoad(ins asm.Instruction) error {
	size := sizeBytes[ins.Opcode&0x18]
	signed := ins.Opcode&0xe0 == asm.ModeMEMSX
	src, err := v.readReg(ins.Src)
	if err != nil {
		return err
	}
	a, err := v.checkAccess(ins.Src, src, ins.Offset, size, false)
	if err != nil {
		return err
	}
	var val reg
	if a.variable {
		if err := v.checkStackRange(a.frame, a.off, a.end-a.off, false); err != nil {
			return err
		}
		val = scalarReg(loadedScalar(size, signed))
	} else if a.typ == ptrStack {
		val, err = v.stackRead(a.frame, a.off, size)
		if err != nil {
			return err
		}
		if val.typ == scalarValue && size < 8 {
			val.off = extend(val.off, size, signed)
		}
	} else {
		val = scalarReg(loadedScalar(size, signed))
	}
	v.st.cur().regs[ins.Dst] = val
	return nil
}

// extend is the value of a size-byte load of a number s.
func extend(s scalar, size int, signed bool) scalar {
	if s.isConst() {
		x := s.value() & (1<<(8*size) - 1)
		if signed && x&(1<<(8*size-1)) != 0 {
			x |= ^uint64(0) << (8 * size)
		}
		return constScalar(x)
	}
	return loadedScalar(size, signed)
}

func (v *verifier) checkStore(ins asm.Instruction) error {
	size := sizeBytes[ins.Opcode&0x18]
	dst, err := v.readReg(ins.Dst)
	if err != nil {
		return err
	}
	var val reg
	if ins.Class() == asm.ClassSTX {
		s, err := v.readReg(ins.Src)
		if err != nil {
			return err
		}
		val = *s
	} else {
		val = scalarReg(constScalar(uint64(int64(ins.Imm))))
	}
	a, err := v.checkAccess(ins.Dst, dst, ins.Offset, size, true)
	if err != nil {
		return err
	}
	if a.variable {
		if val.typ.isPointer() {
			return v.fail(ErrInvalidAccess, "spill of pointer R%d at a variable stack offset", ins.Src)
		}
		return v.stackWriteRange(a.frame, a.off, a.end)
	}
	if a.typ == ptrStack {
		return v.stackWrite(a.frame, a.off, size, val)
	}
	if val.typ.isPointer() && !v.opts.AllowPointerLeaks {
		return v.fail(ErrPointerLeak, "R%d (%s) stored into %s memory", ins.Src, val.typ, a.typ)
	}
	return nil
}

func (v *verifier) checkAtomic(ins asm.Instruction) error {
	size := sizeBytes[ins.Opcode&0x18]
	dst, err := v.readReg(ins.Dst)
	if err != nil {
		return err
	}
	src, err := v.readReg(ins.Src)
	if err != nil {
		return err
	}
	if src.typ != scalarValue {
		return v.fail(ErrPointerLeak, "atomic operation with pointer operand R%d (%s)", ins.Src, src.typ)
	}
	if ins.Imm == asm.AtomicCMPXCHG {
		r0, err := v.readReg(asm.R0)
		if err != nil {
			return err
		}
		if r0.typ != scalarValue {
			return v.fail(ErrPointerLeak, "cmpxchg compares with pointer R0 (%s)", r0.typ)
		}
	}
	switch dst.typ {
	case ptrStack, ptrMapValue:
	case ptrCtx, ptrMem:
		return v.fail(ErrInvalidAccess, "atomic operation on %s memory; only the stack and map values allow them", dst.typ)
	}
	a, err := v.checkAccess(ins.Dst, dst, ins.Offset, size, true)
	if err != nil {
		return err
	}
	if a.variable {
		return v.fail(ErrInvalidAccess, "atomic operation at a variable stack offset (R%d=%s)", ins.Dst, dst.String())
	}
	t := dst.off.t.add(tnumConst(uint64(int64(ins.Offset))))
	if t.mask&uint64(size-1) != 0 || t.value&uint64(size-1) != 0 {
		return v.fail(ErrMisalignedAtomic, "%d-byte atomic operation at offset %s is not %d-byte aligned", size, t, size)
	}
	result := scalarReg(loadedScalar(size, false))
	if a.typ == ptrStack {
		old, err := v.stackRead(a.frame, a.off, size)
		if err != nil {
			return err
		}
		if old.typ != scalarValue {
			return v.fail(ErrInvalidAccess, "atomic operation on a spilled pointer (%s)", old.typ)
		}
		if err := v.stackWrite(a.frame, a.off, size, result); err != nil {
			return err
		}
	}
	f := v.st.cur()
	switch {
	case ins.Imm == asm.AtomicCMPXCHG:
		f.regs[asm.R0] = result
	case ins.Imm&asm.AtomicFetch != 0:
		f.regs[ins.Src] = result
	}
	return nil
}

// stackSlot returns the slot holding byte o (negative) of frame fi, growing
// the frame's slots as needed.
func (v *verifier) stackSlot(fi int, o int64) (*slot, int) {
	f := v.st.frames[fi]
	idx := int((-o - 1) / 8)
	for len(f.stack) <= idx {
		f.stack = append(f.stack, slot{})
	}
	return &f.stack[idx], int((o + vm.StackFrameSize) % 8)
}

func (v *verifier) stackWrite(fi int, o int64, size int, val reg) error {
	if size == 8 && o%8 == 0 {
		sl, _ := v.stackSlot(fi, o)
		sl.kind = [8]uint8{stackSpill, stackSpill, stackSpill, stackSpill, stackSpill, stackSpill, stackSpill, stackSpill}
		sl.spill = val
		return nil
	}
	if val.typ.isPointer() {
		return v.fail(ErrInvalidAccess, "spill of pointer R%d must be an aligned 8-byte store", v.insns[v.pc].Src)
	}
	kind := uint8(stackMisc)
	if val.off.isConst() && val.off.value()&(1<<(8*size)-1) == 0 {
		kind = stackZero
	}
	for i := int64(0); i < int64(size); i++ {
		sl, b := v.stackSlot(fi, o+i)
		if sl.isSpill() {
			if sl.spill.typ.isPointer() && !v.opts.AllowPointerLeaks {
				return v.fail(ErrPointerLeak, "partial overwrite of a spilled pointer (%s) at fp%+d", sl.spill.typ, o+i)
			}
			sl.kind = [8]uint8{stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc}
			sl.spill = reg{}
		}
		sl.kind[b] = kind
	}
	return nil
}

func (v *verifier) stackRead(fi int, o int64, size int) (reg, error) {
	if size == 8 && o%8 == 0 {
		sl, _ := v.stackSlot(fi, o)
		if sl.isSpill() {
			return sl.spill, nil
		}
	}
	allZero := true
	for i := int64(0); i < int64(size); i++ {
		sl, b := v.stackSlot(fi, o+i)
		switch sl.kind[b] {
		case stackInvalid:
			return reg{}, v.fail(ErrUninitialized, "read of %d bytes at fp%+d: byte fp%+d is uninitialised", size, o, o+i)
		case stackSpill:
			if sl.spill.typ.isPointer() {
				return reg{}, v.fail(ErrPointerLeak, "partial read of a spilled pointer (%s) at fp%+d", sl.spill.typ, o+i)
			} else if !(sl.spill.off.isConst() && sl.spill.off.value() == 0) {
				allZero = false
			}
		case stackMisc:
			allZero = false
		}
	}
	if allZero {
		return scalarReg(constScalar(0)), nil
	}
	return scalarReg(loadedScalar(size, false)), nil
}

// stackWriteRange records a store somewhere in [lo, hi) of frame fi: every
// byte there may now hold a number. Spilled registers in the range are
// lost; pointers among them may not be overwritten in part.
func (v *verifier) stackWriteRange(fi int, lo, hi int64) error {
	for o := lo; o < hi; o++ {
		sl, b := v.stackSlot(fi, o)
		if sl.isSpill() {
			if sl.spill.typ.isPointer() && !v.opts.AllowPointerLeaks {
				return v.fail(ErrPointerLeak, "a store at a variable offset may overwrite part of a spilled pointer (%s) at fp%+d", sl.spill.typ, o)
			}
			sl.kind = [8]uint8{stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc}
			sl.spill = reg{}
		}
		sl.kind[b] = stackMisc
	}
	return nil
}

// checkStackRange proves that size bytes at o in frame fi are initialised
// (for a helper reading them), or marks them written (for a helper
// filling them).
func (v *verifier) checkStackRange(fi int, o int64, size int64, fill bool) error {
	for i := int64(0); i < size; i++ {
		sl, b := v.stackSlot(fi, o+i)
		if fill {
			if sl.isSpill() {
				sl.kind = [8]uint8{stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc, stackMisc}
				sl.spill = reg{}
			}
			sl.kind[b] = stackMisc
			continue
		}
		if sl.kind[b] == stackInvalid {
			return v.fail(ErrUninitialized, "helper reads %d bytes at fp%+d: byte fp%+d is uninitialised", size, o, o+i)
		}
		if sl.kind[b] == stackSpill && sl.spill.typ.isPointer() && !v.opts.AllowPointerLeaks {
			return v.fail(ErrPointerLeak, "helper reads a spilled pointer (%s) at fp%+d", sl.spill.typ, o+i)
		}
	}
	return nil
}

var _ = math.MaxInt64
