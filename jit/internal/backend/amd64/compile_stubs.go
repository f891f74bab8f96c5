package amd64

import (
	"math/bits"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// emitEnter emits the code the trampoline calls with stateReg set: it
// puts back the native stack saved at the last resumable exit and the eBPF
// registers, and jumps to resumePC.
func (c *compiler) emitEnter() {
	a := c.a
	c.enterOff = a.Len()
	a.Load(8, tmpC, st(backend.OffLive))
	a.TestRR(8, tmpC, tmpC)
	a.JccShort(x86.CondE, 0)
	skip := a.Len()
	a.ALURR(x86.SUB, 8, x86.RSP, tmpC)
	a.MovRR(8, x86.RDI, x86.RSP)
	a.Load(8, x86.RSI, st(backend.OffSaveArea))
	a.RepMovsb()
	a.Bytes()[skip-1] = byte(a.Len() - skip)
	for i, r := range regMap {
		a.Load(8, r, st(backend.OffRegs+8*int32(i)))
	}
	a.Load(8, budgetReg, st(backend.OffBudget))
	a.JmpMem(st(backend.OffResumePC))
}

// emitStart emits the entry point of a run: the arguments and r10 come
// from the Env, the other registers start at 0 (as in the interpreter),
// the per-run fields of the state are set, and the body follows.
func (c *compiler) emitStart() {
	a := c.a
	start := a.Len()
	c.emitStartCode()
	if c.mayBeDirect() {
		c.emitDirectRoom(start)
		return
	}
	// Align the body, which follows: move the start code (nothing in it
	// is relative to its address) down past int3 padding.
	n := a.Len() - start
	pad := -a.Len() & 15
	for range pad {
		a.Int3()
	}
	b := a.Bytes()
	copy(b[start+pad:], b[start:start+n])
	for i := start; i < start+pad; i++ {
		b[i] = 0xcc
	}
	c.startOff = start + pad
}

// emitDirectRoom ends the start code, emitted at start, with a jump to
// the body and leaves room right before the body, int3 padding where
// appendDirect writes the direct entry, so that it falls into the body (a
// taken jump more cost a call of the shortest programs about a
// nanosecond, a quarter of it). The room is as long as the entry the
// code will get (c.direct) and starts a 64-byte fetch block: the entry
// and as much of the body as fits run from one block. A call whose code
// up to its ret crossed into a second block took 1.92 ns instead of 1.64.
func (c *compiler) emitDirectRoom(start int) {
	a := c.a
	// The entry's length: assembled where the room goes, then taken back.
	at := a.Len()
	c.emitRoomEntry(a)
	n := a.Len() - at
	a.Truncate(at)
	a.JmpShort(0)
	jmp := a.Len()
	for a.Len()&63 != 0 {
		a.Int3()
	}
	for range n {
		a.Int3()
	}
	a.Bytes()[jmp-1] = byte(a.Len() - jmp)
	c.startOff = start
	c.directRoomOff = a.Len() - n
}

// mayBeDirect reports whether the code may get a direct entry that falls
// into its body (see appendDirect): it is flat, cannot fail but for its
// budget (a slice of it for resumable code), reads no register but r1
// before writing it (r10 included, so it never names r10), and leaves
// r6, r8 and r9 alone. Package jit decides with more (directCapable);
// where the two disagree the entry jumps to the body, or the room stays
// unused.
func (c *compiler) mayBeDirect() bool {
	return c.flat() && !c.Calls && !c.Packet && !(c.checked && c.Memory) &&
		!c.trap && c.LiveIn&^(1<<1) == 0 && keepsRegs(c.insns)
}

func (c *compiler) emitStartCode() {
	a := c.a
	// Only the registers the program may read before writing them.
	live := c.LiveIn
	for i := 1; i <= 5; i++ {
		if live&(1<<i) != 0 {
			a.Load(8, regMap[i], st(backend.OffArgs+8*int32(i-1)))
		}
	}
	if live&(1<<10) != 0 {
		a.Load(8, regMap[10], st(backend.OffStackLo))
		a.ALURI(x86.ADD, 8, regMap[10], vm.StackSize)
	}
	for _, i := range []int{0, 6, 7, 8, 9} {
		if live&(1<<i) != 0 {
			a.ALURR(x86.XOR, 4, regMap[i], regMap[i])
		}
	}
	a.Load(8, budgetReg, st(backend.OffBudget))
	if c.checked && (c.HotUsed || c.Calls) { // no region allowed the last access yet
		a.StoreImm(8, st(backend.OffHotReadLo+8), 0)
		a.StoreImm(8, st(backend.OffHotWriteLo+8), 0)
	}
	// A tail call may continue in a program with local calls.
	if c.Local || c.Calls {
		a.Lea(tmpAddr, x86.M(regMap[10], vm.StackFrameSize-vm.StackSize))
		a.Store(8, st(backend.OffCallLimit), tmpAddr)
	}
	if c.Calls {
		a.StoreImm(8, st(backend.OffProgTag), int32(c.tag))
	}
}

// emitLeave emits the two paths back to Go for anything but a normal exit,
// with the reason in rcx. leaveResume, for exits Go resumes from, stores
// the eBPF registers and copies the live native stack (local calls in
// progress) to the save area: the trampoline's frame does not survive the
// return to Go. leaveFinal, for errors, only unwinds.
func (c *compiler) emitLeave() {
	a := c.a
	c.leaveOff = a.Len()
	// r0 and the budget stay in rax and rdx, which the trampoline (enter)
	// stores with the reason.
	for i, r := range regMap[1:] {
		a.Store(8, st(backend.OffRegs+8*int32(i+1)), r)
	}
	a.MovRR(8, tmpAddr, tmpC) // the reason
	a.Load(8, tmpC, st(backend.OffNativeBase))
	a.ALURR(x86.SUB, 8, tmpC, x86.RSP)
	a.Store(8, st(backend.OffLive), tmpC)
	a.JccShort(x86.CondE, 0)
	skip := a.Len()
	a.MovRR(8, x86.RSI, x86.RSP)
	a.Load(8, x86.RDI, st(backend.OffSaveArea))
	a.RepMovsb()
	a.Bytes()[skip-1] = byte(a.Len() - skip)
	a.MovRR(8, tmpC, tmpAddr)
	c.leaveFinalOff = a.Len()
	a.Load(8, x86.RSP, st(backend.OffNativeBase))
	a.Ret()
}

// jmpLeave emits "mov ecx, reason; jmp leave", to the final path for
// errors.
func (c *compiler) jmpLeave(reason uint32) {
	c.a.MovRI32(tmpC, reason)
	if c.flatLeave {
		c.flatReturn()
		return
	}
	c.a.JmpTo(c.leaveFinalOff)
}

// emitAbort emits the end of a run from any depth with r0 = 0, what a
// packet load outside the packet does.
func (c *compiler) emitAbort() {
	a := c.a
	c.abortOff = a.Len()
	a.ALURR(x86.XOR, 4, x86.RAX, x86.RAX)
	a.ALURR(x86.XOR, 4, tmpC, tmpC)
	a.JmpTo(c.leaveFinalOff)
}

// emitRegionCheck emits the subroutine that slow paths of checked
// accesses call when the address is not on the stack, and returns its
// offset. In: r11 = address, edx = size, ecx = 1 for a write; exitPC set.
// It returns when a region allows the access, and otherwise leaves with
// backend.ReasonFault. The probe variant, for keys of inline lookups and the guards
// of loops with hoisted checks (compile_hoist.go), also allows the stack,
// and returns in both cases, with ecx = 0 when the stack or a region
// allows the access and 1 if not.
func (c *compiler) emitRegionCheck(probe bool) int {
	a := c.a
	start := a.Len()
	a.Push(x86.RAX)
	a.Push(x86.RBX)
	a.Lea(tmpD, x86.MIndex(tmpAddr, tmpD, 1, 0)) // end of the access
	a.ALURR(x86.CMP, 8, tmpD, tmpAddr)
	jOverflow := a.Jcc(x86.CondB)
	if probe {
		// The stack, which is not in the region list (the checks' own
		// slow paths test it before calling): start and end inside.
		a.MovRR(8, x86.RAX, tmpAddr)
		a.ALURM(x86.SUB, 8, x86.RAX, st(backend.OffStackLo))
		a.ALURI(x86.CMP, 8, x86.RAX, vm.StackSize)
		a.JccShort(x86.CondAE, 0)
		notStack := a.Len()
		a.MovRR(8, x86.RBX, tmpD)
		a.ALURM(x86.SUB, 8, x86.RBX, st(backend.OffStackLo))
		a.ALURI(x86.CMP, 8, x86.RBX, vm.StackSize)
		a.JccShort(x86.CondA, 0)
		notStack2 := a.Len()
		a.Pop(x86.RBX)
		a.Pop(x86.RAX)
		a.ALURR(x86.XOR, 4, tmpC, tmpC)
		a.Ret()
		a.Bytes()[notStack-1] = byte(a.Len() - notStack)
		a.Bytes()[notStack2-1] = byte(a.Len() - notStack2)
	}
	a.Load(8, x86.RBX, st(backend.OffRegions))
	a.Load(8, x86.RAX, st(backend.OffNRegions))
	loop := a.Len()
	a.TestRR(8, x86.RAX, x86.RAX)
	jNone := a.Jcc(x86.CondE)
	a.ALURM(x86.CMP, 8, tmpAddr, x86.M(x86.RBX, int32(engine.RegionLoOffset)))
	a.JccShort(x86.CondB, 0)
	next1 := a.Len()
	a.ALURM(x86.CMP, 8, tmpD, x86.M(x86.RBX, int32(engine.RegionHiOffset)))
	a.JccShort(x86.CondA, 0)
	next2 := a.Len()
	a.CmpMemByteReg(x86.M(x86.RBX, int32(engine.RegionWritableOffset)), tmpC)
	a.JccShort(x86.CondB, 0)
	next3 := a.Len()
	// Allowed: remember the region for the inline tests of this kind of
	// access (rcx: 0 read, 1 write; hot*Lo/End pairs are 16 bytes apart).
	a.ShiftRI(x86.SHL, 4, tmpC, 4)
	a.Load(8, x86.RAX, x86.M(x86.RBX, int32(engine.RegionLoOffset)))
	a.Store(8, x86.MIndex(stateReg, tmpC, 1, backend.OffHotReadLo), x86.RAX)
	a.Load(8, tmpD, x86.M(x86.RBX, int32(engine.RegionHiOffset)))
	a.ALURR(x86.SUB, 8, tmpD, x86.RAX)
	a.ALURI(x86.SUB, 8, tmpD, 7)
	a.JccShort(x86.CondAE, 2) // size - 7 >= 0 (no borrow)
	a.ALURR(x86.XOR, 4, tmpD, tmpD)
	a.Store(8, x86.MIndex(stateReg, tmpC, 1, backend.OffHotReadLo+8), tmpD)
	a.Pop(x86.RBX)
	a.Pop(x86.RAX)
	if probe {
		a.ALURR(x86.XOR, 4, tmpC, tmpC)
	}
	a.Ret()
	next := a.Len()
	for _, j := range []int{next1, next2, next3} {
		a.Bytes()[j-1] = byte(next - j)
	}
	a.ALURI(x86.ADD, 8, x86.RBX, int32(engine.RegionSize))
	a.ALURI(x86.SUB, 8, x86.RAX, 1)
	a.JmpTo(loop)
	fault := a.Len()
	a.PatchRel32(jOverflow, fault)
	a.PatchRel32(jNone, fault)
	if probe {
		a.Pop(x86.RBX)
		a.Pop(x86.RAX)
		a.MovRI32(tmpC, 1)
		a.Ret()
		return start
	}
	a.ALURR(x86.SUB, 8, tmpD, tmpAddr)
	a.Store(8, st(backend.OffExitAddr), tmpAddr)
	a.Store(8, st(backend.OffExitSize), tmpD)
	a.Pop(x86.RBX)
	a.Pop(x86.RAX)
	// The budget, which the caller (emitMemSlowPaths) pushed before
	// calling: the run reports what it executed.
	a.Load(8, budgetReg, x86.M(x86.RSP, 8))
	c.jmpLeave(backend.ReasonFault)
	return start
}

// memVariant indexes the shared slow paths of checked accesses: by size,
// kind (read or write) and whether the inline test was the stack's (r10)
// or the hot region's.
func memVariant(size int, write, r10 bool) int {
	v := bits.TrailingZeros(uint(size)) // 0..3
	if write {
		v |= 4
	}
	if r10 {
		v |= 8
	}
	return v
}

// emitMemSlowPaths emits the shared slow path of each access variant the
// body used. Each access's own stub only records its pc and calls one of
// them: "mov [exitPC], pc; call shared; jmp resume". In: r11 = the address
// minus the base of the inline test (the hot region's start, or the
// stack's for r10); they return when the access is allowed.
func (c *compiler) emitMemSlowPaths() {
	a := c.a
	for v := range c.memShared {
		if c.memUsed&(1<<v) == 0 {
			continue
		}
		c.memShared[v] = int32(a.Len())
		size := int32(1) << (v & 3)
		write := v&4 != 0
		if v&8 != 0 {
			a.ALURM(x86.ADD, 8, tmpAddr, st(backend.OffStackLo))
		} else {
			hot := backend.OffHotReadLo
			if write {
				hot = backend.OffHotWriteLo
			}
			a.ALURM(x86.ADD, 8, tmpAddr, st(hot))
			// Not in the hot region: the stack, then the region list.
			a.MovRR(8, tmpC, tmpAddr)
			a.ALURM(x86.SUB, 8, tmpC, st(backend.OffStackLo))
			a.ALURI(x86.CMP, 8, tmpC, vm.StackSize-size)
			a.JccShort(x86.CondA, 1)
			a.Ret()
		}
		a.Push(budgetReg)
		a.MovRI32(tmpD, uint32(size))
		var w uint32
		if write {
			w = 1
		}
		a.MovRI32(tmpC, w)
		a.PatchRel32(a.Call(), c.regionCheckOff)
		a.Pop(budgetReg)
		a.Ret()
	}
}

// jmpLeavePC leaves with reason and the pc in the reason's upper bits,
// which saves the store of exitPC; pcs that do not fit store it anyway.
func (c *compiler) jmpLeavePC(reason uint32, pc int32) {
	if pc >= backend.PCInExitPC {
		c.a.StoreImm(8, st(backend.OffExitPC), pc)
		pc = backend.PCInExitPC
	}
	c.jmpLeave(reason | uint32(pc)<<8)
}

// resumable reports whether the code can run long: it has a backward jump
// or a local call (see Program.resumable). Its budget failures then end a
// slice (leaveBudget).
func (c *compiler) resumable() bool { return c.Loops || c.Local }

// leaveBudget leaves when the budget register is overdrawn at the
// charging instruction at slot pc. In resumable code that ends a slice:
// Go resumes at code offset resume (-1: right after this code) with the
// next slice, or fails the run if its budget is spent. Elsewhere the
// budget handed to the code was all of it, and the run fails.
func (c *compiler) leaveBudget(pc int32, resume int) {
	if !c.resumable() {
		c.jmpLeavePC(backend.ReasonBudget, pc)
		return
	}
	a := c.a
	leaPos := a.LeaRIP(tmpAddr)
	if pc >= backend.PCInExitPC {
		a.StoreImm(8, st(backend.OffExitPC), pc)
		pc = backend.PCInExitPC
	}
	a.MovRI32(tmpC, backend.ReasonSlice|uint32(pc)<<8)
	switch {
	case !c.flatLeave:
		a.Store(8, st(backend.OffResumePC), tmpAddr)
		a.PatchRel32(a.Jmp(), c.leaveOff)
	case c.flatSliceOff == 0:
		c.emitFlatSlice()
	default:
		a.JmpTo(c.flatSliceOff)
	}
	if resume < 0 {
		resume = a.Len()
	}
	a.PatchRel32(leaPos, resume)
}

// emitFlatSlice emits the end of a slice for flat code, where nothing is
// on the native stack (see flat): the resumable exit without the native
// stack's copy, which needs no record of the stack's base, so that lean
// runs on the frames that do not record it can end a slice too. In:
// r11 = where to resume, rcx = the reason.
func (c *compiler) emitFlatSlice() {
	a := c.a
	c.flatSliceOff = a.Len()
	a.Store(8, st(backend.OffResumePC), tmpAddr)
	a.StoreImm(8, st(backend.OffLive), 0)
	for i, r := range regMap[1:] {
		a.Store(8, st(backend.OffRegs+8*int32(i+1)), r)
	}
	c.flatReturn()
}

// flatReturn emits the end of a leave of flat code, with the reason in
// rcx: a return to Go, or for code that may get a resumable direct entry,
// a jump to emitDirectLeave's test of which entry ran it.
func (c *compiler) flatReturn() {
	if c.directLeaveOff != 0 {
		c.a.JmpTo(c.directLeaveOff)
		return
	}
	c.a.Ret()
}

// emitStub emits one out-of-line path.
// memStubSeq is the start of a stubMemCheck: the store of its slot (an
// imm32 ending 5 bytes before the end) and the call of the shared slow
// path (a rel32 at the end).
var memStubSeq = x86.NewSeq(func(a *x86.Asm) {
	a.StoreImm(8, st(backend.OffExitPC), 0)
	a.Call()
})

func (c *compiler) emitStub(s *stub) {
	a := c.a
	if s.patch >= 0 {
		a.PatchRel32(int(s.patch), a.Len())
	}
	switch s.kind {
	case stubMemCheck:
		// "mov qword [exitPC], pc; call slow path" as one copy, its
		// fields patched: a program has one such stub per checked access.
		end := a.EmitSeq(&memStubSeq) + memStubSeq.Len()
		a.Patch32(end-9, s.pc)
		a.PatchRel32(end-4, int(c.memShared[s.size]))
		a.JmpTo(int(s.resume))
	case stubBudgetCond:
		// Overdrawn: fail only if the jump is taken.
		ins := &c.insns[s.pc]
		if s.size != 0 {
			a.Repeat(int(s.off), int(s.size))
		} else {
			c.emitCompare(ins)
		}
		a.JccTo(jumpConds[ins.Opcode>>4].Invert(), int(c.offsets[s.pc+1]))
		c.leaveBudget(s.pc, int(c.offsets[frontend.JumpTarget(int(s.pc), ins)]))
	case stubBudget:
		// Resume right after the test, or at the slot the goto that
		// tested goes to.
		resume := int(s.patch) + 4
		if s.target != 0 {
			resume = int(c.offsets[s.target-1])
		}
		c.leaveBudget(s.pc, resume)
	case stubEdge:
		c.emitEdge(s.pc, s.target, s.n)
	case stubLookup:
		c.emitLookupStub(s)
	case stubDivZero, stubDivMinusOne:
		c.emitDivSpecial(s)
	case stubSwitchRefund:
		c.emitRefund(s)
	case stubHoistProbe:
		c.emitHoistProbe(s)
	case stubIdiomProbe:
		c.emitIdiomProbe(s)
	case stubSelect:
		c.emitSelectStub(s)
	case stubCallDepth:
		c.jmpLeavePC(backend.ReasonCallDepth, s.pc)
	case stubMisaligned:
		a.StoreImm(8, st(backend.OffExitPC), s.pc)
		a.Lea(tmpAddr, x86.M(s.base, s.off))
		a.Store(8, st(backend.OffExitAddr), tmpAddr)
		a.StoreImm(8, st(backend.OffExitSize), int32(s.size))
		c.jmpLeave(backend.ReasonMisaligned)
	case stubKeyCheck:
		a.StoreImm(8, st(backend.OffExitPC), s.pc)
		c.emitKeyCheck(s)
	case stubReturn:
		a.StoreImm(8, st(backend.OffExitPC), s.pc)
		a.Lea(tmpAddr, x86.MRIP(int32(int(s.resume)-(a.Len()+7))))
		a.Store(8, st(backend.OffResumePC), tmpAddr)
		a.MovRI32(tmpC, backend.ReasonReturn)
		a.JmpTo(c.leaveOff)
	}
}
