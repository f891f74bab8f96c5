package vm

import (
	"fmt"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
)

// decode validates the program's structure and fills p.code. Every error is
// a *LoadError naming the instruction slot.
func (p *Program) decode() error {
	n := len(p.insns)
	if n == 0 {
		return &LoadError{Program: p.name, Err: ErrEmptyProgram}
	}
	p.code = make([]insn, n)
	// lddwTail marks second slots of lddw, which no jump may target.
	lddwTail := make([]bool, n)
	var targets []struct{ from, to int }
	for i := 0; i < n; i++ {
		ins := p.insns[i]
		fail := func(format string, args ...any) error {
			return &LoadError{Program: p.name, Index: i, Err: fmt.Errorf(format, args...)}
		}
		if ins.Dst > asm.R10 || ins.Src > asm.R10 {
			return fail("%w: dst r%d, src r%d", ErrInvalidRegister, ins.Dst, ins.Src)
		}
		d := insn{dst: ins.Dst, src: ins.Src, off: int32(ins.Offset), imm: uint64(int64(ins.Imm))}
		writesDst := false
		switch class := ins.Class(); class {
		case asm.ClassALU, asm.ClassALU64:
			op, err := decodeALU(ins)
			if err != nil {
				return fail("%w", err)
			}
			d.op = op
			d.off = 0
			switch op {
			case opLsh64K, opRsh64K, opArsh64K:
				d.imm &= 63
			case opLsh32K, opRsh32K, opArsh32K:
				d.imm &= 31
			}
			writesDst = true
		case asm.ClassJMP, asm.ClassJMP32:
			op, target, err := decodeJump(ins, i)
			if err != nil {
				return fail("%w", err)
			}
			d.op = op
			switch op {
			case opCall:
				fn, ok := p.helpers[ins.Imm]
				if !ok || fn.Func == nil {
					return fail("%w: helper %d", ErrHelperMissing, ins.Imm)
				}
				d.imm = uint64(len(p.funcs))
				p.funcs = append(p.funcs, fn.Func)
				if fn.ArrayLookup {
					d.op = opCallArrayLookup
					if fn.HashLookup {
						d.off = 1 // hash maps too (drive)
					}
				} else if fn.HashUpdate {
					d.off = 1 // drive updates hash maps itself
				}
			case opCallX:
				p.callsX = true
				if ins.Dst == asm.R10 {
					return fail("%w: callx through r10", ErrInvalidRegister)
				}
			case opExit:
			default:
				targets = append(targets, struct{ from, to int }{i, target})
				d.off = int32(target)
			}
		case asm.ClassLD:
			switch {
			case ins.Opcode == asm.OpLDDW:
				if i+1 >= n || p.insns[i+1].Opcode != 0 || p.insns[i+1].Dst != 0 ||
					p.insns[i+1].Src != 0 || p.insns[i+1].Offset != 0 {
					return fail("%w", ErrIncompleteLDDW)
				}
				if ins.Offset != 0 {
					return fail("%w: lddw offset %d", ErrInvalidField, ins.Offset)
				}
				if ins.Dst == asm.R10 {
					return fail("%w", ErrWriteToR10)
				}
				p.lddwIndex = i
				value, err := p.lddwValue(ins, p.insns[i+1])
				if err != nil {
					return fail("%w", err)
				}
				d.op, d.imm = opLDDW, value
				lddwTail[i+1] = true
				p.code[i] = d
				i++
				continue
			case ins.Opcode&0xe0 == asm.ModeABS || ins.Opcode&0xe0 == asm.ModeIND:
				op, ok := packetOps[ins.Opcode]
				if !ok {
					return fail("%w %#02x", ErrUnknownOpcode, ins.Opcode)
				}
				d.op = op
			default:
				return fail("%w %#02x", ErrUnknownOpcode, ins.Opcode)
			}
		case asm.ClassLDX:
			op, ok := loadOps[ins.Opcode]
			if !ok {
				return fail("%w %#02x", ErrUnknownOpcode, ins.Opcode)
			}
			d.op = op
			writesDst = true
		case asm.ClassST:
			op, ok := storeImmOps[ins.Opcode]
			if !ok {
				return fail("%w %#02x", ErrUnknownOpcode, ins.Opcode)
			}
			d.op = op
		case asm.ClassSTX:
			if ins.Opcode&0xe0 == asm.ModeATOMIC {
				ops, ok := atomicOps[ins.Imm]
				if !ok || (ins.Opcode != asm.ClassSTX|asm.ModeATOMIC|asm.SizeW &&
					ins.Opcode != asm.ClassSTX|asm.ModeATOMIC|asm.SizeDW) {
					return fail("%w: atomic opcode %#02x imm %#x", ErrUnknownOpcode, ins.Opcode, ins.Imm)
				}
				d.op = ops[0]
				if ins.Opcode&0x18 == asm.SizeDW {
					d.op = ops[1]
				}
				if ins.Imm&asm.AtomicFetch != 0 && ins.Imm != asm.AtomicCMPXCHG && ins.Src == asm.R10 {
					return fail("%w: atomic fetch into r10", ErrWriteToR10)
				}
				break
			}
			op, ok := storeRegOps[ins.Opcode]
			if !ok {
				return fail("%w %#02x", ErrUnknownOpcode, ins.Opcode)
			}
			d.op = op
		}
		if writesDst && ins.Dst == asm.R10 {
			return fail("%w", ErrWriteToR10)
		}
		p.code[i] = d
	}
	for _, t := range p.callbacks {
		if lddwTail[t] {
			return &LoadError{Program: p.name, Err: fmt.Errorf("%w: callback at %d", ErrJumpIntoLDDW, t)}
		}
	}
	for _, t := range targets {
		if t.to < 0 || t.to >= n {
			return &LoadError{Program: p.name, Index: t.from, Err: fmt.Errorf("%w: target %d of %d instructions", ErrJumpOutOfRange, t.to, n)}
		}
		if lddwTail[t.to] {
			return &LoadError{Program: p.name, Index: t.from, Err: fmt.Errorf("%w: target %d", ErrJumpIntoLDDW, t.to)}
		}
	}
	last := n - 1
	if lddwTail[last] {
		last--
	}
	switch p.code[last].op {
	case opExit, opJa:
	default:
		return &LoadError{Program: p.name, Index: last, Err: ErrFallsOffEnd}
	}
	return nil
}

// decodeALU resolves an ALU or ALU64 instruction.
func decodeALU(ins asm.Instruction) (uint8, error) {
	op := ins.Opcode & 0xf0
	is64 := ins.Class() == asm.ClassALU64
	switch op {
	case asm.AluNEG:
		if ins.Opcode&asm.SourceX != 0 || ins.Offset != 0 {
			break
		}
		if is64 {
			return opNeg64, nil
		}
		return opNeg32, nil
	case asm.AluEND:
		var ops [3]uint8
		switch {
		case is64 && ins.Opcode&asm.SourceX == 0:
			ops = [3]uint8{opBswap16, opBswap32, opBswap64}
		case !is64 && ins.Opcode&asm.SourceX == 0:
			ops = [3]uint8{opLe16, opLe32, opLe64}
		case !is64:
			// to big endian on a little-endian host: a swap.
			ops = [3]uint8{opBswap16, opBswap32, opBswap64}
		default:
			return 0, fmt.Errorf("%w %#02x", ErrUnknownOpcode, ins.Opcode)
		}
		switch ins.Imm {
		case 16:
			return ops[0], nil
		case 32:
			return ops[1], nil
		case 64:
			return ops[2], nil
		}
		return 0, fmt.Errorf("%w: byte swap width %d", ErrInvalidField, ins.Imm)
	case asm.AluDIV, asm.AluMOD:
		base, ok := aluOps[ins.Opcode]
		if !ok {
			break
		}
		switch ins.Offset {
		case 0:
			return base, nil
		case 1: // sdiv, smod
			return base + (opSdiv64K - opDiv64K), nil
		}
		return 0, fmt.Errorf("%w: offset %d of div/mod", ErrInvalidField, ins.Offset)
	case asm.AluMOV:
		if ins.Opcode&asm.SourceX != 0 && ins.Offset != 0 {
			switch {
			case is64 && ins.Offset == 8:
				return opMovsx8to64, nil
			case is64 && ins.Offset == 16:
				return opMovsx16to64, nil
			case is64 && ins.Offset == 32:
				return opMovsx32to64, nil
			case !is64 && ins.Offset == 8:
				return opMovsx8to32, nil
			case !is64 && ins.Offset == 16:
				return opMovsx16to32, nil
			}
			return 0, fmt.Errorf("%w: movsx offset %d", ErrInvalidField, ins.Offset)
		}
	}
	if op, ok := aluOps[ins.Opcode]; ok {
		if ins.Offset != 0 {
			return 0, fmt.Errorf("%w: offset %d on an ALU instruction", ErrInvalidField, ins.Offset)
		}
		return op, nil
	}
	return 0, fmt.Errorf("%w %#02x", ErrUnknownOpcode, ins.Opcode)
}

// decodeJump resolves a JMP or JMP32 instruction at slot i and returns its
// target slot (for jumps and local calls).
func decodeJump(ins asm.Instruction, i int) (op uint8, target int, err error) {
	switch ins.Opcode {
	case asm.ClassJMP | asm.JmpJA:
		return opJa, i + 1 + int(ins.Offset), nil
	case asm.ClassJMP32 | asm.JmpJA: // gotol: the offset is in imm
		return opJa, i + 1 + int(ins.Imm), nil
	case asm.OpExit:
		return opExit, 0, nil
	case asm.OpCall:
		switch ins.Src {
		case 0:
			return opCall, 0, nil
		case asm.PseudoCall:
			return opCallLocal, i + 1 + int(ins.Imm), nil
		case asm.PseudoKfuncCall:
			return 0, 0, fmt.Errorf("%w: kfunc call %d", ErrUnsupported, ins.Imm)
		}
		return 0, 0, fmt.Errorf("%w: call src %d", ErrInvalidField, ins.Src)
	case asm.OpCallX:
		return opCallX, 0, nil
	}
	if op, ok := jumpOps[ins.Opcode]; ok {
		return op, i + 1 + int(ins.Offset), nil
	}
	return 0, 0, fmt.Errorf("%w %#02x", ErrUnknownOpcode, ins.Opcode)
}

// lddwValue returns the constant an lddw loads, resolving map references.
func (p *Program) lddwValue(lo, hi asm.Instruction) (uint64, error) {
	switch lo.Src {
	case 0:
		return uint64(uint32(lo.Imm)) | uint64(uint32(hi.Imm))<<32, nil
	case asm.PseudoMapFD:
		if lo.Imm < 0 || int(lo.Imm) >= len(p.maps) || hi.Imm != 0 {
			return 0, fmt.Errorf("%w: map index %d of %d", ErrUnresolvedMap, lo.Imm, len(p.maps))
		}
		return p.mapPointer(int(lo.Imm)), nil
	case asm.PseudoFunc:
		target := p.lddwIndex + 1 + int(lo.Imm)
		if target < 0 || target >= len(p.insns) || hi.Imm != 0 {
			return 0, fmt.Errorf("%w: function at %d outside the program", ErrJumpOutOfRange, target)
		}
		p.callbacks = append(p.callbacks, target)
		return funcTag | uint64(target), nil
	case asm.PseudoMapValue:
		if lo.Imm < 0 || int(lo.Imm) >= len(p.maps) {
			return 0, fmt.Errorf("%w: map index %d of %d", ErrUnresolvedMap, lo.Imm, len(p.maps))
		}
		dm, ok := p.maps[lo.Imm].(DirectMemory)
		if !ok {
			return 0, fmt.Errorf("%w: map %d has no directly addressable value", ErrUnresolvedMap, lo.Imm)
		}
		mem := dm.Memory()
		off := uint64(uint32(hi.Imm))
		if off >= uint64(len(mem)) {
			return 0, fmt.Errorf("%w: offset %d outside the %d-byte value of map %d", ErrUnresolvedMap, off, len(mem), lo.Imm)
		}
		base := unsafe.Pointer(unsafe.SliceData(mem))
		p.addStaticRegion(base, len(mem), dm.Flags()&flagReadOnlyProg == 0)
		return uint64(uintptr(base)) + off, nil
	}
	return 0, fmt.Errorf("%w: lddw src %d", ErrInvalidField, lo.Src)
}

func (p *Program) addStaticRegion(base unsafe.Pointer, size int, writable bool) {
	lo := uint64(uintptr(base))
	for _, r := range p.regions {
		if r.lo == lo {
			return
		}
	}
	p.regions = append(p.regions, region{lo: lo, hi: lo + uint64(size), writable: writable, keep: base})
}

var packetOps = map[uint8]uint8{
	asm.ClassLD | asm.ModeABS | asm.SizeB: opLdAbsB,
	asm.ClassLD | asm.ModeABS | asm.SizeH: opLdAbsH,
	asm.ClassLD | asm.ModeABS | asm.SizeW: opLdAbsW,
	asm.ClassLD | asm.ModeIND | asm.SizeB: opLdIndB,
	asm.ClassLD | asm.ModeIND | asm.SizeH: opLdIndH,
	asm.ClassLD | asm.ModeIND | asm.SizeW: opLdIndW,
}

var loadOps = map[uint8]uint8{
	asm.ClassLDX | asm.ModeMEM | asm.SizeB:   opLdxB,
	asm.ClassLDX | asm.ModeMEM | asm.SizeH:   opLdxH,
	asm.ClassLDX | asm.ModeMEM | asm.SizeW:   opLdxW,
	asm.ClassLDX | asm.ModeMEM | asm.SizeDW:  opLdxDW,
	asm.ClassLDX | asm.ModeMEMSX | asm.SizeB: opLdxSB,
	asm.ClassLDX | asm.ModeMEMSX | asm.SizeH: opLdxSH,
	asm.ClassLDX | asm.ModeMEMSX | asm.SizeW: opLdxSW,
}

var storeImmOps = map[uint8]uint8{
	asm.ClassST | asm.ModeMEM | asm.SizeB:  opStB,
	asm.ClassST | asm.ModeMEM | asm.SizeH:  opStH,
	asm.ClassST | asm.ModeMEM | asm.SizeW:  opStW,
	asm.ClassST | asm.ModeMEM | asm.SizeDW: opStDW,
}

var storeRegOps = map[uint8]uint8{
	asm.ClassSTX | asm.ModeMEM | asm.SizeB:  opStxB,
	asm.ClassSTX | asm.ModeMEM | asm.SizeH:  opStxH,
	asm.ClassSTX | asm.ModeMEM | asm.SizeW:  opStxW,
	asm.ClassSTX | asm.ModeMEM | asm.SizeDW: opStxDW,
}
