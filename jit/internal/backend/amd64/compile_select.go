package amd64

import (
	"math"

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
	if c.fast == nil {
		c.selects++
	}
	j, m := &c.insns[pc], &c.insns[pc+1]
	if !sel.Goto && c.emitCarrySelect(pc, j, m) {
		return
	}
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
	if c.fast != nil {
		c.gotoInCopy(target) // the lea and cmov charged the goto
		return
	}
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

// emitCarrySelect emits a triangle whose condition is an unsigned
// comparison in fewer instructions, when it can: the comparison is
// written so that the carry flag is the condition (taken, or not taken),
// and one add or subtract with carry charges the stretch up to the jump
// and the mov's slot when not taken, which is also the budget's test:
//
//	mov r11, B; cmp ...; cmovNOT x, r11; sbb budget, n (or adc budget, -n-1); js stub
//
// The test happens after the mov; when the budget is overdrawn the stub
// compares again (the mov wrote no compared register) and fails only if
// the jump is taken, which charged no more than the stretch up to it;
// otherwise it comes back, as the ordinary jump's stub does.
func (c *compiler) emitCarrySelect(pc int, j, m *asm.Instruction) bool {
	cs, ok := carrySelectOf(j, m)
	if !ok {
		return false
	}
	a := c.a
	dst := regMap[m.Dst]
	taken1, zeroOne := c.zeroOneSelect(pc)
	var src x86.Reg
	if zeroOne {
		a.ALURR(x86.XOR, 4, dst, dst) // before the comparison: it changes the flags
	} else {
		src = c.selectValue(m)
	}
	start := a.Len()
	size := 8
	if j.Class() == asm.ClassJMP32 {
		size = 4
	}
	switch {
	case j.Opcode&asm.SourceX == 0:
		a.ALURI(x86.CMP, size, regMap[j.Dst], cs.imm)
	case cs.swap:
		a.ALURR(x86.CMP, size, regMap[j.Src], regMap[j.Dst])
	default:
		a.ALURR(x86.CMP, size, regMap[j.Dst], regMap[j.Src])
	}
	end := a.Len()
	taken := x86.CondAE
	if cs.takenCarry {
		taken = x86.CondB
	}
	switch {
	case !zeroOne:
		a.Cmov(taken.Invert(), 8, dst, src)
	case taken1:
		a.Setcc(taken, dst)
	default:
		a.Setcc(taken.Invert(), dst)
	}
	n := int32(c.stretch.Pending(pc + 1))
	c.stretch.Charged()
	charge := a.Len()
	if cs.takenCarry {
		a.ALURI(x86.ADC, 8, budgetReg, -n-1) // n+1 slots, one back when taken
	} else {
		a.ALURI(x86.SBB, 8, budgetReg, n) // n slots, one more when not taken
	}
	c.noteCopyCharge(charge)
	c.resetTracking()
	if c.fast != nil {
		return true // the adc or sbb charged, and needs no test
	}
	s := c.toStub(x86.CondS, stubSelect, pc)
	s.off, s.size, s.n = int32(start), uint8(end-start), int32(taken)
	s.resume = int32(a.Len())
	return true
}

// carrySelect is how emitCarrySelect compares: swap, compare src with
// dst; imm, the immediate to compare with (k+1 for a > k, which is
// a >= k+1, and a <= k, which is a < k+1); takenCarry, the jump is taken
// exactly when the comparison sets the carry flag.
type carrySelect struct {
	swap, takenCarry bool
	imm              int32
}

// carrySelectOf returns how the select of jump j and mov m compares as a
// carry select, if it can be one: an unsigned comparison that the mov
// does not change.
func carrySelectOf(j, m *asm.Instruction) (carrySelect, bool) {
	x := j.Opcode&asm.SourceX != 0
	if m.Dst == j.Dst || x && m.Dst == j.Src {
		return carrySelect{}, false
	}
	var cs carrySelect
	plusOne := false
	switch j.Opcode & 0xf0 {
	case asm.JmpJGE:
	case asm.JmpJLT:
		cs.takenCarry = true
	case asm.JmpJGT:
		cs.swap, plusOne, cs.takenCarry = x, !x, x
	case asm.JmpJLE:
		cs.swap, plusOne, cs.takenCarry = x, !x, !x
	default:
		return carrySelect{}, false
	}
	cs.imm = j.Imm
	if plusOne {
		// k+1 must not wrap in the comparison's width, and in 64 bits
		// must stay a sign-extended 32-bit immediate.
		if cs.imm == -1 || j.Class() == asm.ClassJMP && cs.imm == math.MaxInt32 {
			return carrySelect{}, false
		}
		cs.imm = int32(uint32(cs.imm) + 1)
	}
	return cs, true
}

// zeroOneSelect reports whether the carry select whose jump is at slot pc
// makes its register 0 or 1 from a mov of the other right before the
// jump, which nothing jumps to: the register is then the condition
// (taken1: 1 when the jump is taken) or its inverse, one setcc, and the
// mov before needs no code (see movBeforeZeroOne). A mov of 1 and a
// cmov of a 0 cost about 16 % more on log2_int's loop.
func (c *compiler) zeroOneSelect(pc int) (taken1, ok bool) {
	if pc == 0 || pc+1 >= len(c.insns) || c.Starts[pc] {
		return false, false
	}
	before, j, m := &c.insns[pc-1], &c.insns[pc], &c.insns[pc+1]
	if !isMovImm(before) || !isMovImm(m) || before.Dst != m.Dst || before.Imm|m.Imm != 1 || before.Imm&m.Imm != 0 {
		return false, false
	}
	if sel, ok := c.SelectAt(pc); !ok || sel.Goto {
		return false, false
	}
	if _, ok := carrySelectOf(j, m); !ok {
		return false, false
	}
	return before.Imm == 1, true
}

// movBeforeZeroOne reports whether the mov at slot pc needs no code: the
// 0/1 select after it sets its register (zeroOneSelect).
func (c *compiler) movBeforeZeroOne(pc int) bool {
	if len(c.Selects) == 0 {
		return false
	}
	_, ok := c.zeroOneSelect(pc + 1)
	return ok
}

// isMovImm reports whether ins moves an immediate into a register.
func isMovImm(ins *asm.Instruction) bool {
	return ins.Opcode == asm.ClassALU64|asm.AluMOV|asm.SourceK || ins.Opcode == asm.ClassALU|asm.AluMOV|asm.SourceK
}

// emitSelectStub emits the stub of a carry select whose budget is
// overdrawn: fail (or end the slice) if the jump is taken, else go on.
func (c *compiler) emitSelectStub(s *stub) {
	c.a.Repeat(int(s.off), int(s.size))
	c.a.JccTo(x86.Cond(s.n).Invert(), int(s.resume))
	c.leaveBudget(s.pc, int(c.offsets[s.pc+2]))
}
