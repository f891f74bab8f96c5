package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// emitCheck emits the checked-mode test of an access of size bytes at
// [base+off], which returns with the access allowed. Accesses through r10
// inside the current frame need no test: r10 is always a frame boundary.
// Other accesses through r10 are tested against the stack inline; all
// others against the region that allowed the last access of the same kind
// (programs walk their context, a map value, a packet). What fails the
// inline test goes to an out-of-line stub that tests the stack and walks
// the region list.
func (c *compiler) emitCheck(pc int, baseReg uint8, off int32, size int, write bool) {
	if !c.checked {
		return
	}
	if c.inFrame(baseReg, off, size) { // r10, or a copy of it plus a constant
		return
	}
	if c.copying != nil && c.Hoisted[pc] {
		return // a loop's guard tested it (compile_hoist.go)
	}
	a := c.a
	base := regMap[baseReg]
	a.Lea(tmpAddr, x86.M(base, off))
	if baseReg == asm.R10 {
		a.ALURM(x86.SUB, 8, tmpAddr, st(backend.OffStackLo))
		a.ALURI(x86.CMP, 8, tmpAddr, int32(vm.StackSize-size))
		c.memStub(x86.CondA, pc, memVariant(size, write, true))
		return
	}
	seq := &hotChecks[0]
	if write {
		seq = &hotChecks[1]
	}
	a.EmitSeq(seq)
	c.memStubAt(a.Len()-4, pc, memVariant(size, write, false))
}

// hotChecks are the tests of an address in r11 against the hot read and
// write regions, "sub r11, lo; cmp r11, hi-lo; jae stub", prepared once.
var hotChecks = [2]x86.Seq{
	x86.NewSeq(func(a *x86.Asm) {
		a.ALURM(x86.SUB, 8, tmpAddr, st(backend.OffHotReadLo))
		a.ALURM(x86.CMP, 8, tmpAddr, st(backend.OffHotReadLo+8))
		a.Jcc(x86.CondAE)
	}),
	x86.NewSeq(func(a *x86.Asm) {
		a.ALURM(x86.SUB, 8, tmpAddr, st(backend.OffHotWriteLo))
		a.ALURM(x86.CMP, 8, tmpAddr, st(backend.OffHotWriteLo+8))
		a.Jcc(x86.CondAE)
	}),
}

// memStub emits the jump to the slow path of a checked access of variant
// v (see memVariant) that failed its inline test.
func (c *compiler) memStub(cond x86.Cond, pc, v int) {
	c.memStubAt(c.a.Jcc(cond), pc, v)
}

// memStubAt is memStub for a jump already emitted, whose rel32 is at
// patch and ends the code emitted so far.
func (c *compiler) memStubAt(patch, pc, v int) {
	c.memUsed |= 1 << v
	s := c.addStub(patch, stubMemCheck, pc)
	s.size, s.resume = uint8(v), int32(c.a.Len())
}

// emitLoad emits ldx and ldxs, with the displacement off instead of the
// instruction's own (see emitFoldedAccess).
func (c *compiler) emitLoad(pc int, ins *asm.Instruction, off int32) {
	size := frontend.AccessSize(ins.Opcode)
	signed := ins.Opcode&0xe0 == asm.ModeMEMSX
	if c.loadFromSlot(ins.Dst, ins.Src, off, size, signed) {
		// The slot holds a register stored in this block: no access, and
		// none to check (the store was allowed, so is the load).
		return
	}
	c.emitCheck(pc, ins.Src, off, size, false)
	m := x86.M(regMap[ins.Src], off)
	if signed {
		c.a.LoadSX(size, regMap[ins.Dst], m)
	} else {
		c.a.Load(size, regMap[ins.Dst], m)
	}
}

// emitStore emits st and stx, with the displacement off instead of the
// instruction's own (see emitFoldedAccess).
func (c *compiler) emitStore(pc int, ins *asm.Instruction, off int32) {
	size := frontend.AccessSize(ins.Opcode)
	c.emitCheck(pc, ins.Dst, off, size, true)
	m := x86.M(regMap[ins.Dst], off)
	if ins.Class() == asm.ClassSTX {
		c.trackStore(ins.Dst, off, size, int(ins.Src))
	} else {
		c.trackStore(ins.Dst, off, size, -1)
	}
	switch {
	case ins.Class() == asm.ClassSTX:
		c.a.Store(size, m, regMap[ins.Src])
	case c.blind && ins.Imm != 0:
		c.blindImm(tmpC, ins.Imm)
		c.a.Store(size, m, tmpC)
	default:
		c.a.StoreImm(size, m, ins.Imm)
	}
}

// emitPacketLoad emits the legacy LD_ABS/LD_IND: r0 = the big-endian
// value at packet offset imm (+ src32), or the end of the run with r0 = 0
// when that is outside the packet.
func (c *compiler) emitPacketLoad(pc int, ins *asm.Instruction) {
	a := c.a
	c.checkBudget(pc)
	size := frontend.AccessSize(ins.Opcode)
	if ins.Opcode&0xe0 == asm.ModeABS {
		if ins.Imm < 0 {
			a.JmpTo(c.abortOff)
			return
		}
		a.MovRI32(tmpAddr, uint32(ins.Imm))
	} else {
		a.MovRR(4, tmpAddr, regMap[ins.Src])
		a.ALURI(x86.ADD, 4, tmpAddr, ins.Imm)
		a.MovsxRR(4, 8, tmpAddr, tmpAddr)
		a.TestRR(8, tmpAddr, tmpAddr)
		a.JccTo(x86.CondS, c.abortOff)
	}
	a.Lea(tmpC, x86.M(tmpAddr, int32(size)))
	a.ALURM(x86.CMP, 8, tmpC, st(backend.OffPktLen))
	a.JccTo(x86.CondA, c.abortOff)
	a.ALURM(x86.ADD, 8, tmpAddr, st(backend.OffPktPtr))
	m := x86.M(tmpAddr, 0)
	switch {
	case size == 1:
		a.Load(1, x86.RAX, m)
	case size == 2:
		a.Load(2, x86.RAX, m)
		a.ShiftRI(x86.ROR, 2, x86.RAX, 8)
	case c.feat.movbe:
		a.MovbeLoad(4, x86.RAX, m)
	default:
		a.Load(4, x86.RAX, m)
		a.Bswap(4, x86.RAX)
	}
}
