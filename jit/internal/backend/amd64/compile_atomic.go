package amd64

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// emitAtomic emits an atomic read-modify-write. Like the interpreter it
// requires a writable, naturally aligned address (arm64 faults on
// misaligned atomics, and on x86 they are split locks).
func (c *compiler) emitAtomic(pc int, ins *asm.Instruction) error {
	a := c.a
	size := frontend.AccessSize(ins.Opcode)
	c.emitCheck(pc, ins.Dst, int32(ins.Offset), size, true)
	base, src := regMap[ins.Dst], regMap[ins.Src]
	a.Lea(tmpAddr, x86.M(base, int32(ins.Offset)))
	a.TestRI(1, tmpAddr, int32(size-1))
	s := c.toStub(x86.CondNE, stubMisaligned, pc)
	s.base, s.off, s.size = base, int32(ins.Offset), uint8(size)
	m := x86.M(tmpAddr, 0)
	switch ins.Imm {
	case asm.AtomicADD:
		a.LockALUMR(x86.ADD, size, m, src)
	case asm.AtomicOR:
		a.LockALUMR(x86.OR, size, m, src)
	case asm.AtomicAND:
		a.LockALUMR(x86.AND, size, m, src)
	case asm.AtomicXOR:
		a.LockALUMR(x86.XOR, size, m, src)
	case asm.AtomicADD | asm.AtomicFetch:
		a.LockXadd(size, m, src)
	case asm.AtomicXCHG:
		a.Xchg(size, m, src)
	case asm.AtomicCMPXCHG:
		a.LockCmpxchg(size, m, src)
		if size == 4 {
			// On success cmpxchg leaves eax unwritten, upper half included.
			a.MovRR(4, x86.RAX, x86.RAX)
		}
	case asm.AtomicOR | asm.AtomicFetch:
		c.emitFetchLoop(x86.OR, size, src)
	case asm.AtomicAND | asm.AtomicFetch:
		c.emitFetchLoop(x86.AND, size, src)
	case asm.AtomicXOR | asm.AtomicFetch:
		c.emitFetchLoop(x86.XOR, size, src)
	default:
		return fmt.Errorf("%w: atomic operation %#x", vm.ErrUnknownOpcode, ins.Imm)
	}
	return nil
}

// emitFetchLoop emits a fetch-and-op that x86 has no instruction for, as a
// cmpxchg loop on [r11]: src receives the old value.
func (c *compiler) emitFetchLoop(o x86.ALUOp, size int, src x86.Reg) {
	a := c.a
	m := x86.M(tmpAddr, 0)
	a.Store(8, st(backend.OffBudget), budgetReg) // rdx is needed
	a.MovRR(8, tmpC, x86.RAX)                    // cmpxchg needs rax: save r0
	operand := src
	if src == x86.RAX {
		operand = tmpC
	}
	a.Load(size, x86.RAX, m)
	retry := a.Len()
	a.MovRR(8, tmpD, x86.RAX)
	a.ALURR(o, size, tmpD, operand)
	a.LockCmpxchg(size, m, tmpD)
	a.JccTo(x86.CondNE, retry)
	if src != x86.RAX {
		a.MovRR(size, src, x86.RAX)
		a.MovRR(8, x86.RAX, tmpC)
	} else if size == 4 {
		a.MovRR(4, x86.RAX, x86.RAX)
	}
	a.Load(8, budgetReg, st(backend.OffBudget))
}
