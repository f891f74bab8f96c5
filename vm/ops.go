package vm

import "github.com/uebpf/uebpf/asm"

// insn is the pre-decoded form of one instruction slot that the
// interpreter executes: the operation is resolved to one dense code per
// (operation, width, operand kind), immediates are sign-extended once, and
// jump targets are absolute.
type insn struct {
	op  uint8
	dst uint8
	src uint8
	_   uint8
	off int32  // memory offset, absolute jump/call target, or 1 on an opCallArrayLookup of a HashLookup helper and on an opCall of a HashUpdate helper
	imm uint64 // sign-extended immediate, lddw constant, or helper index
}

// Internal operation codes. Names end in K (immediate operand) or X
// (register operand); 32 marks the 32-bit (ALU, JMP32) forms.
const (
	opInvalid uint8 = iota

	opAdd64K
	opAdd64X
	opSub64K
	opSub64X
	opMul64K
	opMul64X
	opDiv64K
	opDiv64X
	opSdiv64K
	opSdiv64X
	opOr64K
	opOr64X
	opAnd64K
	opAnd64X
	opLsh64K
	opLsh64X
	opRsh64K
	opRsh64X
	opNeg64
	opMod64K
	opMod64X
	opSmod64K
	opSmod64X
	opXor64K
	opXor64X
	opMov64K
	opMov64X
	opArsh64K
	opArsh64X
	opMovsx8to64
	opMovsx16to64
	opMovsx32to64
	opBswap16
	opBswap32
	opBswap64

	opAdd32K
	opAdd32X
	opSub32K
	opSub32X
	opMul32K
	opMul32X
	opDiv32K
	opDiv32X
	opSdiv32K
	opSdiv32X
	opOr32K
	opOr32X
	opAnd32K
	opAnd32X
	opLsh32K
	opLsh32X
	opRsh32K
	opRsh32X
	opNeg32
	opMod32K
	opMod32X
	opSmod32K
	opSmod32X
	opXor32K
	opXor32X
	opMov32K
	opMov32X
	opArsh32K
	opArsh32X
	opMovsx8to32
	opMovsx16to32
	opLe16
	opLe32
	opLe64

	opLDDW
	opLdAbsB
	opLdAbsH
	opLdAbsW
	opLdIndB
	opLdIndH
	opLdIndW

	opLdxB
	opLdxH
	opLdxW
	opLdxDW
	opLdxSB
	opLdxSH
	opLdxSW
	opStB
	opStH
	opStW
	opStDW
	opStxB
	opStxH
	opStxW
	opStxDW

	opAtomicAdd32
	opAtomicFetchAdd32
	opAtomicOr32
	opAtomicFetchOr32
	opAtomicAnd32
	opAtomicFetchAnd32
	opAtomicXor32
	opAtomicFetchXor32
	opAtomicXchg32
	opAtomicCmpxchg32
	opAtomicAdd64
	opAtomicFetchAdd64
	opAtomicOr64
	opAtomicFetchOr64
	opAtomicAnd64
	opAtomicFetchAnd64
	opAtomicXor64
	opAtomicFetchXor64
	opAtomicXchg64
	opAtomicCmpxchg64

	opJa
	opJeqK
	opJeqX
	opJgtK
	opJgtX
	opJgeK
	opJgeX
	opJsetK
	opJsetX
	opJneK
	opJneX
	opJsgtK
	opJsgtX
	opJsgeK
	opJsgeX
	opJltK
	opJltX
	opJleK
	opJleX
	opJsltK
	opJsltX
	opJsleK
	opJsleX
	opJeq32K
	opJeq32X
	opJgt32K
	opJgt32X
	opJge32K
	opJge32X
	opJset32K
	opJset32X
	opJne32K
	opJne32X
	opJsgt32K
	opJsgt32X
	opJsge32K
	opJsge32X
	opJlt32K
	opJlt32X
	opJle32K
	opJle32X
	opJslt32K
	opJslt32X
	opJsle32K
	opJsle32X

	opCall
	opCallArrayLookup // opCall of an ArrayLookup helper
	opCallLocal
	opCallX
	opExit
)

// aluOps maps the opcodes of ordinary ALU instructions (offset 0) to their
// internal operation.
var aluOps = map[uint8]uint8{}

// jumpOps maps the opcodes of conditional jumps to their internal operation.
var jumpOps = map[uint8]uint8{}

func init() {
	type pair struct {
		raw uint8
		k   uint8 // the immediate form; the register form is k+1
	}
	for _, a := range []pair{
		{asm.AluADD, opAdd64K}, {asm.AluSUB, opSub64K}, {asm.AluMUL, opMul64K},
		{asm.AluDIV, opDiv64K}, {asm.AluOR, opOr64K}, {asm.AluAND, opAnd64K},
		{asm.AluLSH, opLsh64K}, {asm.AluRSH, opRsh64K}, {asm.AluMOD, opMod64K},
		{asm.AluXOR, opXor64K}, {asm.AluMOV, opMov64K}, {asm.AluARSH, opArsh64K},
	} {
		delta := opAdd32K - opAdd64K
		aluOps[asm.ClassALU64|a.raw|asm.SourceK] = a.k
		aluOps[asm.ClassALU64|a.raw|asm.SourceX] = a.k + 1
		aluOps[asm.ClassALU|a.raw|asm.SourceK] = a.k + delta
		aluOps[asm.ClassALU|a.raw|asm.SourceX] = a.k + 1 + delta
	}
	for _, j := range []pair{
		{asm.JmpJEQ, opJeqK}, {asm.JmpJGT, opJgtK}, {asm.JmpJGE, opJgeK},
		{asm.JmpJSET, opJsetK}, {asm.JmpJNE, opJneK}, {asm.JmpJSGT, opJsgtK},
		{asm.JmpJSGE, opJsgeK}, {asm.JmpJLT, opJltK}, {asm.JmpJLE, opJleK},
		{asm.JmpJSLT, opJsltK}, {asm.JmpJSLE, opJsleK},
	} {
		delta := opJeq32K - opJeqK
		jumpOps[asm.ClassJMP|j.raw|asm.SourceK] = j.k
		jumpOps[asm.ClassJMP|j.raw|asm.SourceX] = j.k + 1
		jumpOps[asm.ClassJMP32|j.raw|asm.SourceK] = j.k + delta
		jumpOps[asm.ClassJMP32|j.raw|asm.SourceX] = j.k + 1 + delta
	}
}

var atomicOps = map[int32][2]uint8{ // imm -> {32-bit op, 64-bit op}
	asm.AtomicADD:                   {opAtomicAdd32, opAtomicAdd64},
	asm.AtomicADD | asm.AtomicFetch: {opAtomicFetchAdd32, opAtomicFetchAdd64},
	asm.AtomicOR:                    {opAtomicOr32, opAtomicOr64},
	asm.AtomicOR | asm.AtomicFetch:  {opAtomicFetchOr32, opAtomicFetchOr64},
	asm.AtomicAND:                   {opAtomicAnd32, opAtomicAnd64},
	asm.AtomicAND | asm.AtomicFetch: {opAtomicFetchAnd32, opAtomicFetchAnd64},
	asm.AtomicXOR:                   {opAtomicXor32, opAtomicXor64},
	asm.AtomicXOR | asm.AtomicFetch: {opAtomicFetchXor32, opAtomicFetchXor64},
	asm.AtomicXCHG:                  {opAtomicXchg32, opAtomicXchg64},
	asm.AtomicCMPXCHG:               {opAtomicCmpxchg32, opAtomicCmpxchg64},
}
