package arm64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/frontend"
)

// emitSelect emits the select whose jump is at slot pc (see
// frontend.Select) without a branch, recording the offsets of its slots
// in offsets, and returns its last slot:
//
//	subs x11, x11, #n; b.mi stub   the stretch up to the jump, as a jump's
//	back:
//	mov x17, B                     (or B's register, or xzr)
//	cmp ...                        the jump's comparison
//	csel x, x, x17, cond           the mov, when the jump is not taken
//	cset x20, !cond                1 when not taken
//	sub x11, x11, x20              the mov's slot, when not taken
//	(goto: subs x11, x11, x20, lsl #1 instead, the mov's and the goto's
//	slots; b.pl T; leave at the goto)
//
// In the copy of a budget loop (compile_loopbudget.go) the charges make
// no test: a plain sub for the stretch, and for the goto "sub x11, x11,
// x20, lsl #1" and the copy's jump to T.
//
// The stub of the first test is the ordinary conditional jump's: an
// overdrawn budget fails there only when the jump is taken, and otherwise
// comes back to back, so that when the jump is taken the budget is not
// overdrawn after it. The goto's test can then fail only when the jump
// is not taken, at the goto, as in the interpreter. The csel is 64-bit:
// a 32-bit one would clear x's upper half when the jump is taken.
func (c *a64Compiler) emitSelect(pc int, sel frontend.Select, offsets []int32) int {
	a := c.a
	c.selects++ // in the body and in loop copies, as on amd64
	j, m := &c.insns[pc], &c.insns[pc+1]
	cond := a64Conds[j.Opcode>>4]
	target := frontend.JumpTarget(pc, j)
	fast := c.budget.fast != nil
	if fast {
		c.chargeInCopy()
	} else {
		c.testBudget()
		c.outOfLine(arm64.MI, func() {
			c.emitCompare(j)
			c.branchTo(must64(arm64.BCond(cond.Invert(), 0)), int(offsets[pc+1]), false)
			c.leaveBudget(pc, target, true)
		})
	}
	offsets[pc+1] = int32(a.Len())
	src := c.selectValue(m) // x17: the comparison may need x16
	c.emitCompare(j)
	x := a64Regs[m.Dst]
	a.Emit(arm64.Csel(8, x, x, src, cond))
	c.emit(arm64.Cset(8, a64Scratch, cond.Invert()))
	c.tr.Reset() // x holds one of two values
	if !sel.Goto {
		a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Budget, a64Budget, a64Scratch))
		return pc + 1
	}
	c.pc = pc + 2
	if fast {
		c.emit(arm64.ALUShifted(arm64.SUB, 8, a64Budget, a64Budget, a64Scratch, arm64.LSL, 1))
		offsets[pc+2] = int32(a.Len())
		c.jumpInCopy(arm64.AL, true, target)
		return pc + 2
	}
	c.emit(arm64.ALUShifted(arm64.SUBS, 8, a64Budget, a64Budget, a64Scratch, arm64.LSL, 1))
	offsets[pc+2] = int32(a.Len())
	c.jumpSlot(arm64.PL, false, target)
	c.leaveBudget(pc+2, target, true)
	return pc + 2
}

// selectValue returns the register that holds the value the mov m of a
// select writes as a 64-bit value, loading it into x17 when it is not in
// one already.
func (c *a64Compiler) selectValue(m *asm.Instruction) arm64.Reg {
	a := c.a
	switch m.Opcode {
	case asm.ClassALU64 | asm.AluMOV | asm.SourceK, asm.ClassALU | asm.AluMOV | asm.SourceK:
		size := 8
		if m.Class() == asm.ClassALU {
			size = 4
		}
		if m.Imm == 0 {
			return arm64.XZR
		}
		a.MovConst(size, a64Tmp2, immValue(m.Imm, size)) // never blinded: blinding turns selects off
	case asm.ClassALU | asm.AluMOV | asm.SourceX:
		a.Emit(arm64.Mov(4, a64Tmp2, a64Regs[m.Src]))
	default: // a 64-bit register
		return a64Regs[m.Src]
	}
	return a64Tmp2
}

// selectAt returns the select whose jump is at slot pc, if any.
func (c *a64Compiler) selectAt(pc int) (frontend.Select, bool) {
	if len(c.Selects) == 0 {
		return frontend.Select{}, false
	}
	return c.SelectAt(pc)
}
