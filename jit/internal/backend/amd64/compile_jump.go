package amd64

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// jumpConds maps the high nibble of a conditional jump to its condition
// (0xff: not a conditional jump).
var jumpConds = [16]x86.Cond{
	asm.JmpJA >> 4: 0xff, asm.JmpCALL >> 4: 0xff, asm.JmpEXIT >> 4: 0xff, 0xe: 0xff, 0xf: 0xff,
	asm.JmpJEQ >> 4: x86.CondE, asm.JmpJNE >> 4: x86.CondNE, asm.JmpJSET >> 4: x86.CondNE,
	asm.JmpJGT >> 4: x86.CondA, asm.JmpJGE >> 4: x86.CondAE, asm.JmpJLT >> 4: x86.CondB, asm.JmpJLE >> 4: x86.CondBE,
	asm.JmpJSGT >> 4: x86.CondG, asm.JmpJSGE >> 4: x86.CondGE, asm.JmpJSLT >> 4: x86.CondL, asm.JmpJSLE >> 4: x86.CondLE,
}

// emitJump emits a JMP or JMP32 class instruction at slot pc. fused: the
// instruction was a call answered inline together with the conditional
// jump at pc+1 (see emitArrayLookup).
func (c *compiler) emitJump(pc int, ins *asm.Instruction) (fused bool, err error) {
	switch ins.Opcode {
	case asm.OpExit:
		// At depth 0 the native stack pointer is at the trampoline's
		// return address, so one ret serves both a return from a local
		// call and the end of the run (rcx = backend.ReasonExit).
		c.checkBudget(pc)
		c.a.ALURR(x86.XOR, 4, tmpC, tmpC)
		c.a.Ret()
		return false, nil
	case asm.OpCall:
		if ins.Src == asm.PseudoCall {
			c.emitLocalCall(pc, pc+1+int(ins.Imm))
		} else if c.inlineLookups && c.isArrayLookup(ins) {
			return c.emitArrayLookup(pc), nil
		} else if l, keySize, valueSize, ok := c.inlineHashUpdate(pc); ok {
			c.emitHashUpdateCall(pc, l, keySize, valueSize)
		} else {
			c.emitHelperExit(pc, backend.ReasonHelper)
		}
		return false, nil
	case asm.OpCallX:
		c.emitHelperExit(pc, backend.ReasonCallX)
		return false, nil
	case asm.ClassJMP | asm.JmpJA, asm.ClassJMP32 | asm.JmpJA:
		c.emitGoto(pc, frontend.JumpTarget(pc, ins))
		return false, nil
	}
	cond := jumpConds[ins.Opcode>>4]
	if cond == 0xff {
		return false, fmt.Errorf("%w %#02x", vm.ErrUnknownOpcode, ins.Opcode)
	}
	target := frontend.JumpTarget(pc, ins)
	if target > pc+1 && (c.LeavesLoop(pc, target) || c.Loops && c.EndsRun(target)) {
		// A jump out of a loop, or to the end of the run, likely not
		// taken: the fall-through path continues the block and the
		// stretch, with no charge and no test; the taken path charges
		// the stretch out of line.
		c.emitCompare(ins)
		c.edgeStub(c.a.Jcc(cond), pc, target)
		return false, nil
	}
	// Other jumps charge inline, and the fall-through path starts a new
	// stretch. Only a taken jump charges the budget: when the budget is
	// overdrawn, the stub decides with the same comparison.
	s := c.budgetStub(stubBudgetCond, pc)
	if target == pc+1 {
		return false, nil // no other effect either way
	}
	// The stub repeats the comparison's bytes rather than encoding it
	// again.
	start := c.a.Len()
	c.emitCompare(ins)
	s.off, s.size = int32(start), uint8(c.a.Len()-start)
	c.jumpToSlot(cond, false, target)
	return false, nil
}

// edgeStub makes the rel32 at patch jump to the taken path of the
// conditional jump at slot pc to target, out of line: it charges the
// stretch so far (the block is not charged on the fall-through path) and
// fails if the budget is overdrawn.
func (c *compiler) edgeStub(patch, pc, target int) {
	n := c.stretch.Pending(pc + 1)
	s := c.addStub(patch, stubEdge, pc)
	s.target, s.n = int32(target), int32(n)
}

// emitEdge emits the code of a stubEdge.
func (c *compiler) emitEdge(pc, target, n int32) {
	if n > 0 {
		c.a.ALURI(x86.SUB, 8, budgetReg, n)
	} else {
		c.a.TestRR(8, budgetReg, budgetReg)
	}
	c.a.JccTo(x86.CondNS, int(c.offsets[target]))
	c.leaveBudget(pc, int(c.offsets[target]))
}

// emitCompare sets the flags for a conditional jump.
func (c *compiler) emitCompare(ins *asm.Instruction) {
	a := c.a
	size := 8
	if ins.Class() == asm.ClassJMP32 {
		size = 4
	}
	dst := regMap[ins.Dst]
	isSet := ins.Opcode&0xf0 == asm.JmpJSET
	if ins.Opcode&asm.SourceX != 0 {
		if isSet {
			a.TestRR(size, dst, regMap[ins.Src])
		} else {
			a.ALURR(x86.CMP, size, dst, regMap[ins.Src])
		}
		return
	}
	switch {
	case c.blind && ins.Imm != 0:
		c.blindImm(tmpAddr, ins.Imm)
		if isSet {
			a.TestRR(size, dst, tmpAddr)
		} else {
			a.ALURR(x86.CMP, size, dst, tmpAddr)
		}
	case isSet:
		a.TestRI(size, dst, ins.Imm)
	case ins.Imm == 0:
		a.TestRR(size, dst, dst) // same flags as cmp dst, 0
	default:
		a.ALURI(x86.CMP, size, dst, ins.Imm)
	}
}

// emitGoto emits ja/gotol.
func (c *compiler) emitGoto(pc, target int) {
	if target == pc+1 {
		c.checkBudget(pc)
		return
	}
	if c.fast != nil {
		c.gotoInCopy(target)
		return
	}
	// jns target, then the budget's failure: one branch on the hot path.
	c.testBudget()
	c.jumpToSlot(x86.CondNS, false, target)
	c.toStub(x86.CondS, stubBudget, pc).target = int32(target) + 1
}

// emitHelperExit returns to Go to run a helper (or callx) at slot pc; Go
// re-enters right after.
func (c *compiler) emitHelperExit(pc int, reason uint32) {
	if reason == backend.ReasonHelper {
		reason = c.helperReason(pc)
	}
	c.checkBudget(pc)
	c.emitHelperLeave(pc, reason)
}

// helperReason returns the exit reason of the helper call at slot pc: the
// helper's index in Program.helpers rides in it.
func (c *compiler) helperReason(pc int) uint32 {
	kind := uint32(backend.ReasonHelper)
	switch h := c.prog.Helpers()[c.insns[pc].Imm]; {
	case h.ArrayLookup && h.HashLookup:
		kind = backend.ReasonHashLookup
	case h.HashUpdate:
		kind = backend.ReasonHashUpdate
	}
	reason := kind | uint32(len(c.helperExits))<<8
	c.helperExits = append(c.helperExits, int32(pc))
	return reason
}

// emitHelperLeave is the part of a helper exit after the budget's test:
// leave for Go to call the helper, and resume right after.
func (c *compiler) emitHelperLeave(pc int, reason uint32) {
	a := c.a
	a.StoreImm(8, st(backend.OffExitPC), int32(pc))
	// lea r11, [rip+resume]: the resume point is right after "jmp leave".
	leaPos := a.LeaRIP(tmpAddr)
	a.Store(8, st(backend.OffResumePC), tmpAddr)
	a.MovRI32(tmpC, reason)
	a.PatchRel32(a.Jmp(), c.leaveOff)
	a.PatchRel32(leaPos, a.Len())
}

// emitLocalCall emits a bpf-to-bpf call: the caller saves r6-r9 on the
// native stack, moves r10 down one frame and calls; the callee's exit
// returns here.
func (c *compiler) emitLocalCall(pc, target int) {
	a := c.a
	// r10 = stack top - 512*depth, so depth+1 >= MaxCallDepth exactly
	// when r10 <= stackLo + 512.
	a.ALURM(x86.CMP, 8, regMap[10], st(backend.OffCallLimit))
	c.toStub(x86.CondBE, stubCallDepth, pc)
	c.checkBudget(pc)
	for _, r := range regMap[6:10] {
		a.Push(r)
	}
	a.ALURI(x86.SUB, 8, regMap[10], vm.StackFrameSize)
	pos := a.Call()
	if target <= pc {
		a.PatchRel32(pos, int(c.offsets[target]))
	} else {
		c.jumps = append(c.jumps, jumpFixup{pos: int32(pos), target: int32(target)})
	}
	a.ALURI(x86.ADD, 8, regMap[10], vm.StackFrameSize)
	for i := 9; i >= 6; i-- {
		a.Pop(regMap[i])
	}
	if c.Calls {
		// The callee may have made a tail call: then this code runs for
		// a program that is no longer the current one, and Go must
		// switch back before anything looks at the current program.
		a.ALUMI(x86.CMP, 4, st(backend.OffProgTag), int32(c.tag))
		c.toStub(x86.CondNE, stubReturn, pc).resume = int32(a.Len())
	}
}
