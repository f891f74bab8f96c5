package verifier

import (
	"math"
	"math/bits"

	"github.com/uebpf/uebpf/asm"
)

var aluNames = map[uint8]string{
	asm.AluADD: "add", asm.AluSUB: "sub", asm.AluMUL: "mul", asm.AluDIV: "div",
	asm.AluOR: "or", asm.AluAND: "and", asm.AluLSH: "lsh", asm.AluRSH: "rsh",
	asm.AluNEG: "neg", asm.AluMOD: "mod", asm.AluXOR: "xor", asm.AluMOV: "mov",
	asm.AluARSH: "arsh", asm.AluEND: "byte swap",
}

// checkALU checks an ALU or ALU64 instruction and computes its result.
func (v *verifier) checkALU(ins asm.Instruction) error {
	f := v.st.cur()
	is64 := ins.Class() == asm.ClassALU64
	op := ins.Opcode & 0xf0
	useX := ins.Opcode&asm.SourceX != 0 && op != asm.AluEND
	dst := &f.regs[ins.Dst]

	var src reg
	if useX {
		s, err := v.readReg(ins.Src)
		if err != nil {
			return err
		}
		src = *s
	} else {
		imm := uint64(int64(ins.Imm))
		if !is64 {
			imm = uint64(uint32(ins.Imm))
		}
		src = scalarReg(constScalar(imm))
	}
	if op == asm.AluMOV {
		return v.checkMov(ins, dst, src, is64, useX)
	}
	if dst.typ == notInit {
		return v.fail(ErrUninitialized, "R%d is read before it is written", ins.Dst)
	}
	if dst.typ.isPointer() || src.typ.isPointer() {
		return v.pointerALU(ins, dst, src, is64, op)
	}
	dst.off = aluScalar(ins, dst.off, src.off)
	return nil
}

func (v *verifier) checkMov(ins asm.Instruction, dst *reg, src reg, is64, useX bool) error {
	switch {
	case !useX:
		*dst = src
	case src.typ.isPointer() && (!is64 || ins.Offset != 0):
		if !v.opts.AllowPointerLeaks || ins.Offset != 0 {
			return v.fail(ErrPointerLeak, "R%d is a %s; a 32-bit or sign-extending move turns it into a number", ins.Src, src.typ)
		}
		*dst = unknownReg()
		if !is64 {
			dst.off = dst.off.cast32()
		}
	case ins.Offset != 0:
		*dst = scalarReg(aluScalar(ins, unknownScalar(), src.off))
	case is64:
		*dst = src
	default:
		*dst = scalarReg(src.off.cast32())
	}
	return nil
}

// pointerALU allows pointer ± number on pointers to memory. With
// AllowPointerLeaks it also allows, as Linux does for privileged loaders,
// what turns pointers into numbers without hiding them in arithmetic:
// pointer - pointer, negation and 32-bit subtraction give an unknown
// number. Everything else is refused either way.
func (v *verifier) pointerALU(ins asm.Instruction, dst *reg, src reg, is64 bool, op uint8) error {
	arith := func(p *reg) bool {
		switch p.typ {
		case ptrCtx, ptrStack, ptrMapValue, ptrMem:
			return true
		}
		return false
	}
	switch {
	case !is64:
	case dst.typ.isPointer() && src.typ == scalarValue && (op == asm.AluADD || op == asm.AluSUB):
		if !arith(dst) {
			return v.pointerArithError(ins.Dst, dst)
		}
		if op == asm.AluADD {
			dst.off = dst.off.add(src.off)
		} else {
			dst.off = dst.off.sub(src.off)
		}
		return nil
	case dst.typ == scalarValue && src.typ.isPointer() && op == asm.AluADD:
		if !arith(&src) {
			return v.pointerArithError(ins.Src, &src)
		}
		n := dst.off
		*dst = src
		dst.off = src.off.add(n)
		return nil
	}
	leak := dst.typ.isPointer() && !dst.typ.orNull() &&
		((op == asm.AluSUB && (src.typ.isPointer() || !is64)) || op == asm.AluNEG)
	if !v.opts.AllowPointerLeaks || !leak {
		which := ins.Dst
		if !dst.typ.isPointer() {
			which = ins.Src
		}
		width := ""
		if !is64 {
			width = "32-bit "
		}
		return v.fail(ErrPointerArith, "%s%s on pointer R%d prohibited; only 64-bit pointer += or -= a number is allowed",
			width, aluNames[op], which)
	}
	*dst = unknownReg()
	if !is64 {
		dst.off = dst.off.cast32()
	}
	return nil
}

func (v *verifier) pointerArithError(r uint8, p *reg) error {
	if p.typ.orNull() {
		return v.fail(ErrPointerArith, "arithmetic on R%d (%s) before it is checked against null", r, p.typ)
	}
	return v.fail(ErrPointerArith, "arithmetic on R%d (%s) prohibited", r, p.typ)
}

// aluScalar computes an ALU instruction on numbers. With both operands
// known it computes the exact result; otherwise it tracks ranges.
func aluScalar(ins asm.Instruction, a, b scalar) scalar {
	is64 := ins.Class() == asm.ClassALU64
	op := ins.Opcode & 0xf0
	if a.isConst() && b.isConst() {
		return constScalar(evalALU(ins, a.value(), b.value()))
	}
	if op == asm.AluEND {
		switch ins.Imm {
		case 16:
			return rangeScalar(0, math.MaxUint16)
		case 32:
			return rangeScalar(0, math.MaxUint32)
		}
		if is64 || ins.Opcode&asm.SourceX != 0 {
			return unknownScalar()
		}
		return a // to little endian, 64 bits: no change
	}
	if op == asm.AluMOV { // sign-extending move
		if b.isConst() {
			return constScalar(evalALU(ins, 0, b.value()))
		}
		bitsN := uint(ins.Offset)
		lo, hi := -(int64(1) << (bitsN - 1)), int64(1)<<(bitsN-1)-1
		r := b
		if !(b.smin >= lo && b.smax <= hi) {
			r = unknownScalar()
			r.smin, r.smax = lo, hi
			r.sync()
		}
		if !is64 {
			return r.cast32()
		}
		return r
	}
	if !is64 {
		a, b = a.cast32(), b.cast32()
	}
	var r scalar
	shiftMask := uint64(63)
	if !is64 {
		shiftMask = 31
	}
	switch op {
	case asm.AluADD:
		r = a.add(b)
	case asm.AluSUB:
		r = a.sub(b)
	case asm.AluMUL:
		r = a.mul(b)
	case asm.AluAND:
		r = a.and(b)
	case asm.AluOR:
		r = a.or(b)
	case asm.AluXOR:
		r = a.xor(b)
	case asm.AluLSH:
		if b.isConst() {
			r = a.lsh(uint(b.value() & shiftMask))
		} else {
			r = unknownScalar()
		}
	case asm.AluRSH:
		if b.isConst() {
			r = a.rsh(uint(b.value() & shiftMask))
		} else {
			r = rangeScalar(0, a.umax)
		}
	case asm.AluARSH:
		if b.isConst() && is64 {
			r = a.arsh(uint(b.value() & 63))
		} else {
			r = unknownScalar()
		}
	case asm.AluDIV:
		switch {
		case ins.Offset != 0: // signed
			r = unknownScalar()
		case b.isConst() && b.value() == 0:
			r = constScalar(0)
		case b.isConst():
			r = rangeScalar(a.umin/b.value(), a.umax/b.value())
		default:
			r = rangeScalar(0, a.umax)
		}
	case asm.AluMOD:
		switch {
		case ins.Offset != 0:
			r = unknownScalar()
		case b.isConst() && b.value() != 0:
			r = rangeScalar(0, min(a.umax, b.value()-1))
		default:
			r = rangeScalar(0, a.umax)
		}
	default: // neg
		r = unknownScalar()
	}
	if !is64 {
		r = r.cast32()
	}
	return r
}

// evalALU computes an ALU instruction on known numbers, with the
// interpreter's semantics.
func evalALU(ins asm.Instruction, a, b uint64) uint64 {
	is64 := ins.Class() == asm.ClassALU64
	op := ins.Opcode & 0xf0
	signed := ins.Offset == 1
	if op == asm.AluEND {
		swap := is64 || ins.Opcode&asm.SourceX != 0
		switch ins.Imm {
		case 16:
			if swap {
				return uint64(bits.ReverseBytes16(uint16(a)))
			}
			return uint64(uint16(a))
		case 32:
			if swap {
				return uint64(bits.ReverseBytes32(uint32(a)))
			}
			return uint64(uint32(a))
		default:
			if swap {
				return bits.ReverseBytes64(a)
			}
			return a
		}
	}
	if is64 {
		switch op {
		case asm.AluADD:
			return a + b
		case asm.AluSUB:
			return a - b
		case asm.AluMUL:
			return a * b
		case asm.AluOR:
			return a | b
		case asm.AluAND:
			return a & b
		case asm.AluXOR:
			return a ^ b
		case asm.AluLSH:
			return a << (b & 63)
		case asm.AluRSH:
			return a >> (b & 63)
		case asm.AluARSH:
			return uint64(int64(a) >> (b & 63))
		case asm.AluNEG:
			return -a
		case asm.AluMOV:
			switch ins.Offset {
			case 8:
				return uint64(int64(int8(b)))
			case 16:
				return uint64(int64(int16(b)))
			case 32:
				return uint64(int64(int32(b)))
			}
			return b
		case asm.AluDIV:
			if b == 0 {
				return 0
			}
			if signed {
				return uint64(int64(a) / int64(b))
			}
			return a / b
		case asm.AluMOD:
			if b == 0 {
				return a
			}
			if signed {
				return uint64(int64(a) % int64(b))
			}
			return a % b
		}
		return 0
	}
	x, y := uint32(a), uint32(b)
	var r uint32
	switch op {
	case asm.AluADD:
		r = x + y
	case asm.AluSUB:
		r = x - y
	case asm.AluMUL:
		r = x * y
	case asm.AluOR:
		r = x | y
	case asm.AluAND:
		r = x & y
	case asm.AluXOR:
		r = x ^ y
	case asm.AluLSH:
		r = x << (y & 31)
	case asm.AluRSH:
		r = x >> (y & 31)
	case asm.AluARSH:
		r = uint32(int32(x) >> (y & 31))
	case asm.AluNEG:
		r = uint32(-int32(x))
	case asm.AluMOV:
		switch ins.Offset {
		case 8:
			r = uint32(int32(int8(y)))
		case 16:
			r = uint32(int32(int16(y)))
		default:
			r = y
		}
	case asm.AluDIV:
		switch {
		case y == 0:
			r = 0
		case signed:
			r = uint32(int32(x) / int32(y))
		default:
			r = x / y
		}
	case asm.AluMOD:
		switch {
		case y == 0:
			r = x
		case signed:
			r = uint32(int32(x) % int32(y))
		default:
			r = x % y
		}
	}
	return uint64(r)
}
