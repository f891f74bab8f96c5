package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// emitSelect emits the select whose jump is at slot pc (see
// frontend.Select) without a branch, recording the offsets of its slots:
//
//	sub budget, n; js stub    the stretch up to the jump, as a jump's
//	mov r11, B                (or B's register)
//	cmp ...                   the jump's comparison
//	cmovNOT x, r11            the mov, when the jump is not taken
//	lea rcx, [budget-k]       the mov's slot (and the goto's), when not
//	cmovNOT budget, rcx         taken
//	(goto: test budget, budget; jns T; js stub)
//
// The stub of the first test is the ordinary conditional jump's: an
// overdrawn budget fails there only when the jump is taken, and otherwise
// comes back to the mov's code (offsets[pc+1]), so that when the jump is
// taken the budget is not overdrawn after it. The goto's test can then
// fail only when the jump is not taken, at the goto, as in the
// interpreter.
func (c *compiler) emitSelect(pc int, sel frontend.Select, offsets []int32) {
	a := c.a
	c.selects++
	j, m := &c.insns[pc], &c.insns[pc+1]
	notTaken := jumpConds[j.Opcode>>4].Invert()
	s := c.budgetStub(stubBudgetCond, pc)
	offsets[pc+1] = int32(a.Len())
	src := c.selectValue(m) // before the comparison: it may change the flags
	start := a.Len()
	c.emitCompare(j)
	s.off, s.size = int32(start), uint8(a.Len()-start)
	// A 32-bit cmov would clear x's upper half when the jump is taken.
	a.Cmov(notTaken, 8, regMap[m.Dst], src)
	slots := int32(1)
	if sel.Goto {
		slots = 2
	}
	a.Lea(tmpC, x86.M(budgetReg, -slots))
	a.Cmov(notTaken, 8, budgetReg, tmpC)
	c.resetTracking() // x holds one of two values
	if !sel.Goto {
		return
	}
	offsets[pc+2] = int32(a.Len())
	target := frontend.JumpTarget(pc, j)
	a.TestRR(8, budgetReg, budgetReg)
	c.jumpToSlot(x86.CondNS, false, target)
	c.toStub(x86.CondS, stubBudget, pc+2).target = int32(target) + 1
}

// selectValue returns the register that holds the value the mov m of a
// select writes, loading it into r11 when it is not one already as a
// 64-bit value.
func (c *compiler) selectValue(m *asm.Instruction) x86.Reg {
	a := c.a
	switch m.Opcode {
	case asm.ClassALU64 | asm.AluMOV | asm.SourceK:
		a.MovRI(tmpAddr, uint64(int64(m.Imm)))
	case asm.ClassALU | asm.AluMOV | asm.SourceK:
		a.MovRI(tmpAddr, uint64(uint32(m.Imm)))
	case asm.ClassALU | asm.AluMOV | asm.SourceX:
		a.MovRR(4, tmpAddr, regMap[m.Src])
	default: // a 64-bit register
		return regMap[m.Src]
	}
	return tmpAddr
}
