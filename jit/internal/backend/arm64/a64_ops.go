package arm64

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// a64ALUOps maps the add/sub/logical eBPF operations to A64 ones.
var a64ALUOps = [16]arm64.ALUOp{
	asm.AluADD >> 4: arm64.ADD, asm.AluSUB >> 4: arm64.SUB, asm.AluOR >> 4: arm64.ORR,
	asm.AluAND >> 4: arm64.AND, asm.AluXOR >> 4: arm64.EOR,
}

var a64Shifts = [16]arm64.Shift{asm.AluLSH >> 4: arm64.LSL, asm.AluRSH >> 4: arm64.LSR, asm.AluARSH >> 4: arm64.ASR}

// immValue is imm as the operand of a size-byte operation: sign-extended
// to 64 bits, or its 32 bits.
func immValue(imm int32, size int) uint64 {
	if size == 4 {
		return uint64(uint32(imm))
	}
	return uint64(int64(imm))
}

// emitALU emits an ALU or ALU64 instruction. 32-bit operations on W
// registers zero-extend their result, as ALU32 requires.
func (c *a64Compiler) emitALU(ins *asm.Instruction) error {
	a := c.a
	size := 4
	if ins.Class() == asm.ClassALU64 {
		size = 8
	}
	dst, src := a64Regs[ins.Dst], a64Regs[ins.Src]
	isX := ins.Opcode&asm.SourceX != 0
	imm := ins.Imm
	// operand returns the second operand in a register.
	operand := func() arm64.Reg {
		if isX {
			return src
		}
		c.movImm(a64Tmp, imm, size)
		return a64Tmp
	}
	switch op := ins.Opcode & 0xf0; op {
	case asm.AluADD, asm.AluSUB, asm.AluOR, asm.AluAND, asm.AluXOR:
		o := a64ALUOps[op>>4]
		if !isX && !c.blind {
			v := immValue(imm, size)
			if op == asm.AluADD || op == asm.AluSUB {
				n := int64(imm)
				if op == asm.AluSUB {
					n = -n
				}
				if w, ok := arm64.AddImm(size, dst, dst, n); ok && imm != -1<<31 {
					a.Emit(w)
					return nil
				}
			} else if w, ok := arm64.ALUImm(o, size, dst, dst, v); ok {
				a.Emit(w)
				return nil
			}
		}
		a.Emit(arm64.ALUReg(o, size, dst, dst, operand()))
	case asm.AluMOV:
		switch {
		case isX && ins.Offset != 0: // movsx
			switch ins.Offset {
			case 8:
				a.Emit(arm64.Sxtb(size, dst, src))
			case 16:
				a.Emit(arm64.Sxth(size, dst, src))
			case 32:
				a.Emit(arm64.Sxtw(dst, src))
			default:
				return fmt.Errorf("%w: movsx offset %d", vm.ErrUnknownOpcode, ins.Offset)
			}
		case isX:
			a.Emit(arm64.Mov(size, dst, src))
		default:
			c.movImm(dst, imm, size)
		}
	case asm.AluMUL:
		a.Emit(arm64.Mul(size, dst, dst, operand()))
	case asm.AluNEG:
		a.Emit(arm64.Neg(size, dst, dst))
	case asm.AluLSH, asm.AluRSH, asm.AluARSH:
		sh := a64Shifts[op>>4]
		if isX {
			// LSLV and friends take the count modulo the width, as
			// eBPF does.
			a.Emit(arm64.ShiftReg(sh, size, dst, dst, src))
			return nil
		}
		n := uint8(imm) & uint8(size*8-1)
		if n == 0 {
			if size == 4 {
				a.Emit(arm64.Mov(4, dst, dst)) // still zero-extends
			}
			return nil
		}
		c.emit(arm64.ShiftImm(sh, size, dst, dst, n))
	case asm.AluDIV, asm.AluMOD:
		// UDIV and SDIV give the ISA's results without trapping: x/0 =
		// 0 and INT_MIN/-1 = INT_MIN. The remainder is x - (x/y)*y
		// (MSUB), which makes x%0 = x and INT_MIN%-1 = 0.
		div := arm64.Udiv
		if ins.Offset == 1 {
			div = arm64.Sdiv
		}
		y := operand()
		if op == asm.AluDIV {
			a.Emit(div(size, dst, dst, y))
			return nil
		}
		a.Emit(div(size, a64Tmp2, dst, y))
		a.Emit(arm64.Msub(size, dst, a64Tmp2, y, dst))
	case asm.AluEND:
		c.emitEndian(ins, dst)
	default:
		return fmt.Errorf("%w %#02x", vm.ErrUnknownOpcode, ins.Opcode)
	}
	return nil
}

// emitEndian emits le/be/bswap.
func (c *a64Compiler) emitEndian(ins *asm.Instruction, dst arm64.Reg) {
	a := c.a
	swap := ins.Class() == asm.ClassALU64 || ins.Opcode&asm.SourceX != 0
	switch {
	case !swap && ins.Imm == 16:
		a.Emit(arm64.Uxth(dst, dst))
	case !swap && ins.Imm == 32:
		a.Emit(arm64.Mov(4, dst, dst))
	case !swap: // le64: nothing to do on a little-endian host
	case ins.Imm == 16:
		a.Emit(arm64.Rev16(4, dst, dst))
		a.Emit(arm64.Uxth(dst, dst))
	case ins.Imm == 32:
		a.Emit(arm64.Rev(4, dst, dst))
	default:
		a.Emit(arm64.Rev(8, dst, dst))
	}
}

// Memory.

// emitCheck leaves in x19 the address [base+off] of an access of size
// bytes and, in checked mode, returns with the access allowed. Accesses
// through r10 inside the current frame need no test; other r10 accesses
// are tested against the stack inline, all others against the region
// that allowed the last access of the same kind. What fails goes out of
// line to the region check.
func (c *a64Compiler) emitCheck(pc int, baseReg uint8, off int32, size int, write bool) {
	a := c.a
	c.addImm(a64Addr, a64Regs[baseReg], int64(off))
	if !c.checked || c.hoist.copying != nil && c.Hoisted[pc] {
		return // unchecked, or hoisted and allowed by the loop's guard
	}
	if baseReg == asm.R10 && off >= -vm.StackFrameSize && int(off)+size <= 0 {
		return
	}
	if baseReg == asm.R10 {
		c.ldState(a64Tmp, backend.OffStackLo)
		a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp2, a64Addr, a64Tmp))
		a.MovConst(8, a64Tmp, uint64(vm.StackSize-size))
		a.Emit(arm64.Cmp(8, a64Tmp2, a64Tmp))
		c.memSlowPath(arm64.HI, pc, size, write)
		return
	}
	hot := backend.OffHotReadLo
	if write {
		hot = backend.OffHotWriteLo
	}
	c.ldState(a64Tmp, hot)
	a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp2, a64Addr, a64Tmp))
	c.ldState(a64Tmp, hot+8)
	a.Emit(arm64.Cmp(8, a64Tmp2, a64Tmp))
	c.memSlowPath(arm64.HS, pc, size, write)
}

// memSlowPath branches on cond to a call of the region check.
func (c *a64Compiler) memSlowPath(cond arm64.Cond, pc, size int, write bool) {
	pos := c.forward(must64(arm64.BCond(cond, 0)))
	back := c.a.Len()
	c.stubs = append(c.stubs, func() {
		a := c.a
		c.here(pos)
		c.setExitPC(pc)
		a.MovConst(8, a64Tmp2, uint64(size))
		w := uint64(0)
		if write {
			w = 1
		}
		a.MovConst(8, a64Tmp, w)
		c.branchTo(must64(arm64.BL(0)), c.regionCheckOff, false)
		c.branchTo(must64(arm64.B(0)), back, false)
	})
}

// emitLoad emits ldx and ldxs.
func (c *a64Compiler) emitLoad(pc int, ins *asm.Instruction) {
	size := frontend.AccessSize(ins.Opcode)
	c.emitCheck(pc, ins.Src, int32(ins.Offset), size, false)
	if ins.Opcode&0xe0 == asm.ModeMEMSX {
		c.emit(arm64.LoadSX(size, a64Regs[ins.Dst], a64Addr, 0))
		return
	}
	c.emit(arm64.Load(size, a64Regs[ins.Dst], a64Addr, 0))
}

// emitStore emits st and stx.
func (c *a64Compiler) emitStore(pc int, ins *asm.Instruction) {
	size := frontend.AccessSize(ins.Opcode)
	c.emitCheck(pc, ins.Dst, int32(ins.Offset), size, true)
	v := a64Regs[ins.Src]
	if ins.Class() == asm.ClassST {
		c.movImm(a64Tmp, ins.Imm, 8)
		v = a64Tmp
	}
	c.emit(arm64.Store(size, v, a64Addr, 0))
}

// emitPacketLoad emits LD_ABS/LD_IND: r0 = the big-endian value at packet
// offset imm (+ src32), or the end of the run with r0 = 0 when that is
// outside the packet.
func (c *a64Compiler) emitPacketLoad(pc int, ins *asm.Instruction) {
	a := c.a
	c.checkBudget(pc)
	size := frontend.AccessSize(ins.Opcode)
	// Out of line: the abort stub may be beyond B.cond's reach.
	abort := func(cond arm64.Cond) {
		c.outOfLine(cond, func() { c.branchTo(must64(arm64.B(0)), c.abortOff, false) })
	}
	if ins.Opcode&0xe0 == asm.ModeABS {
		if ins.Imm < 0 {
			c.branchTo(must64(arm64.B(0)), c.abortOff, false)
			return
		}
		a.MovConst(8, a64Addr, uint64(ins.Imm))
	} else {
		c.movImm(a64Tmp, ins.Imm, 4)
		a.Emit(arm64.ALUReg(arm64.ADD, 4, a64Addr, a64Regs[ins.Src], a64Tmp))
		a.Emit(arm64.Sxtw(a64Addr, a64Addr))
		c.emit(arm64.CmpImm(8, a64Addr, 0))
		abort(arm64.LT)
	}
	c.emit(arm64.AddImm(8, a64Tmp, a64Addr, int64(size)))
	c.ldState(a64Tmp2, backend.OffPktLen)
	a.Emit(arm64.Cmp(8, a64Tmp, a64Tmp2))
	abort(arm64.HI)
	c.ldState(a64Tmp2, backend.OffPktPtr)
	c.emit(arm64.LdrReg(size, arm64.X0, a64Tmp2, a64Addr))
	switch size {
	case 2:
		a.Emit(arm64.Rev16(4, arm64.X0, arm64.X0))
	case 4:
		a.Emit(arm64.Rev(4, arm64.X0, arm64.X0))
	}
}

// Atomics.

// emitAtomic emits an atomic read-modify-write. Like the interpreter it
// requires a writable, naturally aligned address (arm64 faults on
// misaligned atomics). With LSE each is one instruction; without, a
// load-acquire/store-release exclusive loop.
func (c *a64Compiler) emitAtomic(pc int, ins *asm.Instruction) error {
	a := c.a
	size := frontend.AccessSize(ins.Opcode)
	if size != 4 && size != 8 {
		return fmt.Errorf("%w: atomic of %d bytes", vm.ErrUnknownOpcode, size)
	}
	c.emitCheck(pc, ins.Dst, int32(ins.Offset), size, true)
	c.emit(arm64.TstImm(8, a64Addr, uint64(size-1)))
	c.outOfLine(arm64.NE, func() {
		c.setExitPC(pc)
		a.MovConst(8, a64Tmp2, uint64(size))
		c.branchTo(must64(arm64.B(0)), c.misalignedOff, false)
	})
	src := a64Regs[ins.Src]
	fetch := ins.Imm&asm.AtomicFetch != 0
	var op arm64.ALUOp
	var lse arm64.AtomicOp
	switch ins.Imm &^ asm.AtomicFetch {
	case asm.AtomicADD:
		op, lse = arm64.ADD, arm64.LDADD
	case asm.AtomicOR:
		op, lse = arm64.ORR, arm64.LDSET
	case asm.AtomicAND:
		op, lse = arm64.AND, arm64.LDCLR
	case asm.AtomicXOR:
		op, lse = arm64.EOR, arm64.LDEOR
	default:
		switch ins.Imm {
		case asm.AtomicXCHG:
			if c.lse {
				c.emit(arm64.Atomic(arm64.SWP, arm64.AcqRel, size, src, src, a64Addr))
			} else {
				c.llsc(size, src, func() arm64.Reg { return src })
			}
			return nil
		case asm.AtomicCMPXCHG:
			c.emitCmpxchg(size, src)
			return nil
		}
		return fmt.Errorf("%w: atomic operation %#x", vm.ErrUnknownOpcode, ins.Imm)
	}
	if c.lse {
		operand := src
		if lse == arm64.LDCLR { // and = clear the bits of the complement
			a.Emit(arm64.Mvn(size, a64Tmp, src))
			operand = a64Tmp
		}
		if fetch {
			c.emit(arm64.Atomic(lse, arm64.AcqRel, size, operand, src, a64Addr))
		} else {
			c.emit(arm64.Atomic(lse, arm64.Relaxed, size, operand, arm64.XZR, a64Addr))
		}
		return nil
	}
	var old arm64.Reg = arm64.XZR
	if fetch {
		old = src
	}
	c.llsc(size, old, func() arm64.Reg {
		a.Emit(arm64.ALUReg(op, size, a64Scratch, a64Tmp2, src))
		return a64Scratch
	})
	return nil
}

// llsc emits "retry: ldaxr x17, [x19]; new = value(); stlxr w21, new,
// [x19]; cbnz w21, retry", then moves the old value to old (unless XZR)
// and ends with a full barrier, as the kernel's arm64 JIT does.
func (c *a64Compiler) llsc(size int, old arm64.Reg, value func() arm64.Reg) {
	a := c.a
	retry := a.Len()
	c.emit(arm64.Ldxr(true, size, a64Tmp2, a64Addr))
	v := value()
	c.emit(arm64.Stxr(true, size, a64Scratch2, v, a64Addr))
	c.branchTo(must64(arm64.Cbnz(4, a64Scratch2, 0)), retry, false)
	a.Emit(arm64.Dmb(arm64.BarrierISH))
	if old != arm64.XZR {
		a.Emit(arm64.Mov(size, old, a64Tmp2))
	}
}

// clrex clears the exclusive monitor.
const clrex = 0xd503305f

// emitCmpxchg emits cmpxchg: if [x19] == r0 then [x19] = src; r0 = the
// old value (zero-extended for 32 bits).
func (c *a64Compiler) emitCmpxchg(size int, src arm64.Reg) {
	a := c.a
	r0 := a64Regs[0]
	if c.lse {
		c.emit(arm64.Cas(arm64.AcqRel, size, r0, src, a64Addr))
		if size == 4 {
			a.Emit(arm64.Mov(4, r0, r0))
		}
		return
	}
	retry := a.Len()
	c.emit(arm64.Ldxr(true, size, a64Tmp2, a64Addr))
	a.Emit(arm64.Cmp(size, a64Tmp2, r0))
	fail := c.forward(must64(arm64.BCond(arm64.NE, 0)))
	c.emit(arm64.Stxr(true, size, a64Scratch2, src, a64Addr))
	c.branchTo(must64(arm64.Cbnz(4, a64Scratch2, 0)), retry, false)
	done := c.forward(must64(arm64.B(0)))
	c.here(fail)
	a.Emit(clrex)
	c.here(done)
	a.Emit(arm64.Dmb(arm64.BarrierISH))
	a.Emit(arm64.Mov(size, r0, a64Tmp2))
}

// Jumps and calls.

// emitJump emits a JMP or JMP32 class instruction at slot pc.
func (c *a64Compiler) emitJump(pc int, ins *asm.Instruction) error {
	a := c.a
	switch ins.Opcode {
	case asm.OpExit:
		c.checkBudget(pc)
		if c.Local || c.Calls {
			// Above the native stack's base, the exit returns from a
			// local call (of this program, or of one that tail-called
			// this one): pop the frame and go back to the caller, which
			// restores r6-r10.
			c.ldState(a64Tmp, backend.OffSaveArea)
			a.Emit(arm64.Cmp(8, a64Native, a64Tmp))
			c.outOfLine(arm64.NE, func() {
				c.emit(arm64.AddImm(8, a64Native, a64Native, -a64FrameBytes))
				c.emit(arm64.Load(8, a64Tmp, a64Native, 32))
				a.Emit(arm64.Br(a64Tmp))
			})
		}
		a.Emit(arm64.Mov(8, a64Reason, arm64.XZR))
		c.ldState(arm64.RegLR, backend.OffNativeBase)
		a.Emit(arm64.Ret())
		return nil
	case asm.OpCall:
		if ins.Src == asm.PseudoCall {
			c.emitLocalCall(pc, pc+1+int(ins.Imm))
		} else if !c.emitCallInline(pc) {
			c.emitHelperExit(pc, c.helperReason(pc))
		}
		return nil
	case asm.OpCallX:
		c.emitHelperExit(pc, backend.ReasonCallX)
		return nil
	case asm.ClassJMP | asm.JmpJA, asm.ClassJMP32 | asm.JmpJA:
		target := frontend.JumpTarget(pc, ins)
		if c.budget.fast != nil {
			c.chargeInCopy()
			c.jumpInCopy(arm64.AL, true, target)
			return nil
		}
		c.testBudget()
		c.jumpSlot(arm64.PL, false, target)
		c.leaveBudget(pc, target, true)
		return nil
	}
	if !frontend.IsConditional(ins) {
		return fmt.Errorf("%w %#02x", vm.ErrUnknownOpcode, ins.Opcode)
	}
	cond := a64Conds[ins.Opcode>>4]
	target := frontend.JumpTarget(pc, ins)
	// Only a taken jump charges in the interpreter; here the block is
	// charged either way (the count is the same), and an overdrawn budget
	// fails only when the jump is taken, decided out of line. The copy
	// of a budget loop charges without a test.
	if c.budget.fast != nil {
		c.chargeInCopy()
		c.emitCompare(ins)
		c.jumpInCopy(cond, false, target)
		return nil
	}
	c.testBudget()
	c.outOfLine(arm64.MI, func() {
		c.emitCompare(ins)
		c.jumpSlot(cond.Invert(), false, pc+1)
		c.leaveBudget(pc, target, true)
	})
	c.emitCompare(ins)
	c.jumpSlot(cond, false, target)
	return nil
}

// emitCompare sets the flags for a conditional jump.
func (c *a64Compiler) emitCompare(ins *asm.Instruction) {
	a := c.a
	size := 8
	if ins.Class() == asm.ClassJMP32 {
		size = 4
	}
	dst := a64Regs[ins.Dst]
	isSet := ins.Opcode&0xf0 == asm.JmpJSET
	var rm arm64.Reg
	if ins.Opcode&asm.SourceX != 0 {
		rm = a64Regs[ins.Src]
	} else if !c.blind {
		if isSet {
			if w, ok := arm64.TstImm(size, dst, immValue(ins.Imm, size)); ok {
				a.Emit(w)
				return
			}
		} else if ins.Imm >= 0 {
			if w, ok := arm64.CmpImm(size, dst, int64(ins.Imm)); ok {
				a.Emit(w)
				return
			}
		}
		c.movImm(a64Tmp, ins.Imm, size)
		rm = a64Tmp
	} else {
		c.movImm(a64Tmp, ins.Imm, size)
		rm = a64Tmp
	}
	if isSet {
		a.Emit(arm64.Tst(size, dst, rm))
	} else {
		a.Emit(arm64.Cmp(size, dst, rm))
	}
}

// helperReason returns the exit reason of the helper call at slot pc,
// with the helper's index in Program.helpers.
func (c *a64Compiler) helperReason(pc int) uint64 {
	kind := uint64(backend.ReasonHelper)
	// Lookups not inlined (no arrays to inline them with): Go answers
	// arrays as the interpreter does.
	switch h := c.prog.Helpers()[c.insns[pc].Imm]; {
	case h.ArrayLookup && h.HashLookup:
		kind = backend.ReasonArrayHashLookup
	case h.ArrayLookup:
		kind = backend.ReasonArrayLookup
	case h.HashUpdate:
		kind = backend.ReasonHashUpdate
	}
	reason := kind | uint64(len(c.helperExits))<<8
	c.helperExits = append(c.helperExits, int32(pc))
	return reason
}

// emitHelperExit returns to Go to run a helper (or callx) at slot pc; Go
// re-enters right after.
func (c *a64Compiler) emitHelperExit(pc int, reason uint64) {
	a := c.a
	if k := reason & 0xff; k == backend.ReasonArrayLookup || k == backend.ReasonArrayHashLookup {
		// The interpreter answers arrays without ending the stretch; Go
		// does too, and charges the stretch (its length in exitSize)
		// only when the helper runs, refunding it afterwards: this
		// code charges it again where the block ends.
		a.MovConst(8, a64Tmp, uint64(pc+1-c.stretch.Start))
		c.stState(a64Tmp, backend.OffExitSize)
	} else {
		c.checkBudget(pc)
	}
	c.setExitPC(pc)
	pos := c.adr()
	c.stState(a64Tmp, backend.OffResumePC)
	a.MovConst(8, a64Reason, reason)
	c.branchTo(must64(arm64.B(0)), c.leaveOff, false)
	c.adrHere(pos)
}

// emitLocalCall emits a bpf-to-bpf call: push the return address and
// r6-r9 on the native stack, move r10 down one frame, and branch; the
// callee's exit comes back here.
func (c *a64Compiler) emitLocalCall(pc, target int) {
	a := c.a
	// r10 = stack top - 512*depth: depth+1 >= MaxCallDepth exactly when
	// r10 <= callLimit.
	c.ldState(a64Tmp, backend.OffCallLimit)
	a.Emit(arm64.Cmp(8, a64Regs[10], a64Tmp))
	c.outOfLine(arm64.LS, func() { c.leavePC(backend.ReasonCallDepth, pc, false) })
	c.checkBudget(pc)
	n := a64Native
	c.emit(arm64.Stp(8, a64Regs[6], a64Regs[7], n, 0, arm64.Offset))
	c.emit(arm64.Stp(8, a64Regs[8], a64Regs[9], n, 16, arm64.Offset))
	ret := c.adr()
	c.emit(arm64.Store(8, a64Tmp, n, 32))
	c.emit(arm64.AddImm(8, n, n, a64FrameBytes))
	c.emit(arm64.AddImm(8, a64Regs[10], a64Regs[10], -vm.StackFrameSize))
	c.jumpSlot(arm64.AL, true, target)
	c.adrHere(ret)
	// The callee's exit popped the frame; its words are still there.
	c.emit(arm64.Ldp(8, a64Regs[6], a64Regs[7], n, 0, arm64.Offset))
	c.emit(arm64.Ldp(8, a64Regs[8], a64Regs[9], n, 16, arm64.Offset))
	c.emit(arm64.AddImm(8, a64Regs[10], a64Regs[10], vm.StackFrameSize))
	if c.Calls {
		// The callee may have made a tail call: this code then runs for
		// a program that is no longer the current one, and Go must
		// switch back first.
		c.ldState(a64Tmp, backend.OffProgTag)
		a.MovConst(4, a64Tmp2, uint64(c.tag))
		a.Emit(arm64.Cmp(4, a64Tmp, a64Tmp2))
		pos := c.forward(must64(arm64.BCond(arm64.NE, 0)))
		back := a.Len()
		c.stubs = append(c.stubs, func() {
			c.here(pos)
			c.setExitPC(pc)
			p := c.adr()
			c.fixups = append(c.fixups, a64Fixup{pos: int32(p), target: int32(back), label: true, adr: true})
			c.stState(a64Tmp, backend.OffResumePC)
			a.MovConst(8, a64Reason, backend.ReasonReturn)
			c.branchTo(must64(arm64.B(0)), c.leaveOff, false)
		})
	}
}
