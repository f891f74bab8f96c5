package arm64

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// Inline array lookups, as the amd64 back end does them. A call to an
// ArrayLookup helper (vm.Helper) is answered in generated code, as the
// interpreter answers it, when r1 is a map pointer (the address of an
// entry of the program's map table) to an array and the 4-byte key at r2
// is readable: r0 = the element's address, or 0 past the end. Anything
// else takes an ordinary helper exit. The inline answer does not end the
// interpreter's straight-line stretch, so it tests no budget; the helper
// exit charges the stretch up to the call, tests it, and gives it back
// after the helper, so that every path goes on with the stretch
// uncharged. The element's memory is a static region of the program, so
// later checked accesses through r0 find it in the region list.
//
// The generic code indexes a table emitted with the out-of-line stubs
// (base, stride, count per map table entry, base 0 for maps left to the
// helper), which an ADR reaches as the stubs' branches do. When r1 is
// known to hold an array's entry (lddw r1, map earlier in the block),
// that array's constants are used instead and there is no table.

// arrayInfoSize is the size of an entry of the array table: base, stride,
// count and padding, so that a map table offset (a multiple of
// engine.MapEntrySize = 16) times 2 indexes it.
const arrayInfoSize = 32

// a64Inline is the compiler's state for inline lookups and hash updates.
type a64Inline struct {
	lookups   bool              // some call may be answered by an inline lookup
	tableBase uint64            // address of the program's map table
	arrays    []engine.ArrayMap // by map table entry
	// infoFixups are the ADRs (of x20) of the array table that the next
	// flush of stubs emits.
	infoFixups []int
	probeOff   int  // the key probe subroutine (checked code)
	fused      bool // the last lookup answered the null test after it
	updates    int  // calls answered by inline hash updates
}

// prepareLookups fetches the program's arrays when it calls an
// ArrayLookup helper, and turns inlining off when there is nothing to
// inline.
func (c *a64Compiler) prepareLookups() {
	if !c.Lookups || engine.MapEntrySize*2 != arrayInfoSize {
		return
	}
	c.lk.tableBase, c.lk.arrays = engine.ArrayMaps(unsafe.Pointer(c.prog))
	if uint64(len(c.lk.arrays))*engine.MapEntrySize > math.MaxInt32 {
		return
	}
	for _, a := range c.lk.arrays {
		if a.Base != 0 {
			c.lk.lookups = true
		}
	}
}

// track updates what the compiler knows inside the block (c.tr) after
// the instruction at slot pc, as the amd64 back end does.
func (c *a64Compiler) track(pc int, ins *asm.Instruction) {
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		if c.tr.NeedsALU(ins) {
			c.tr.ALU(ins)
		}
	case asm.ClassLDX:
		c.tr.Load(ins.Dst, ins.Src, int32(ins.Offset), frontend.AccessSize(ins.Opcode), ins.Opcode&0xe0 == asm.ModeMEMSX)
	case asm.ClassST, asm.ClassSTX:
		if ins.Opcode&0xe0 == asm.ModeATOMIC {
			c.tr.Reset()
			return
		}
		src := -1 // an immediate
		if ins.Class() == asm.ClassSTX {
			src = int(ins.Src)
		}
		c.tr.Store(ins.Dst, int32(ins.Offset), frontend.AccessSize(ins.Opcode), src)
	case asm.ClassLD:
		if ins.Opcode == asm.OpLDDW {
			c.tr.LDDW(ins.Dst, backend.Constant(c.prog, pc))
		} else {
			c.tr.Reset() // packet loads write r0
		}
	case asm.ClassJMP, asm.ClassJMP32:
		if op := ins.Opcode & 0xf0; op == asm.JmpCALL || op == asm.JmpEXIT {
			c.tr.Reset()
		}
	}
}

// emitCallInline emits the helper call at slot pc inline if it can and
// reports whether it did.
func (c *a64Compiler) emitCallInline(pc int) bool {
	if c.lk.lookups && frontend.IsArrayLookup(c.prog, &c.insns[pc]) {
		c.lk.fused = c.emitArrayLookup(pc)
		return true
	}
	if l, keySize, valueSize, ok := c.inlineHashUpdate(pc); ok {
		c.emitHashUpdateCall(pc, l, keySize, valueSize)
		return true
	}
	return false
}

// knownMap returns the index of the map table entry that r1 points to at
// this call, if known.
func (c *a64Compiler) knownMap() (int, bool) { return c.tr.KnownMap(c.prog) }

// knownArray returns the array that r1 points to at this call, if known.
func (c *a64Compiler) knownArray() (engine.ArrayMap, bool) {
	m, ok := c.knownMap()
	if !ok || m >= len(c.lk.arrays) {
		return engine.ArrayMap{}, false
	}
	a := c.lk.arrays[m]
	if a.Base == 0 || a.Stride > math.MaxInt32 {
		return engine.ArrayMap{}, false
	}
	return a, true
}

// emitArrayLookup emits the call at slot pc of an ArrayLookup helper, and
// reports whether it also emitted the null test of r0 at pc+1. The hit
// path is inline; the miss (r0 = 0) and the helper's exit are out of
// line. With the null test answered too, the hit path knows r0 is not 0
// and the miss path that it is: neither compares it.
//
// Registers: x19 the key, x20 the array's table entry, x16, x17, x21
// scratch; r1-r5 are only read.
func (c *a64Compiler) emitArrayLookup(pc int) bool {
	a := c.a
	cost := pc + 1 - c.stretch.Start
	fused, target := c.NullTestAfter(pc)
	var misses, helpers []int // branches to the out-of-line paths
	r0, r1, r2 := a64Regs[0], a64Regs[1], a64Regs[2]
	key, info := a64Addr, a64Scratch

	// The key: a slot of the current frame needs no check, and may be
	// known to hold a register.
	keyOff, keyInFrame := c.tr.FrameOff(asm.R2, 0)
	keyInFrame = keyInFrame && keyOff >= -vm.StackFrameSize && keyOff <= -4
	keyReg, keyKnown := uint8(0), false
	if keyInFrame {
		keyReg, keyKnown = c.tr.KeySlot(keyOff)
	}
	loadKey := func() {
		if keyKnown {
			a.Emit(arm64.Mov(4, key, a64Regs[keyReg]))
		} else {
			c.emit(arm64.Load(4, key, r2, 0))
		}
	}
	if c.checked && !keyInFrame {
		// On the stack inline; elsewhere, out of line, the region of
		// the last read, then the region list, or the helper's.
		c.ldState(a64Tmp, backend.OffStackLo)
		a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp2, r2, a64Tmp))
		c.emit(arm64.CmpImm(8, a64Tmp2, vm.StackSize-4))
		pos := c.forward(must64(arm64.BCond(arm64.HI, 0)))
		back := a.Len()
		c.stubs = append(c.stubs, func() {
			c.here(pos)
			c.ldState(a64Tmp, backend.OffHotReadLo)
			a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp2, r2, a64Tmp))
			c.ldState(a64Tmp, backend.OffHotReadLo+8)
			a.Emit(arm64.Cmp(8, a64Tmp2, a64Tmp))
			c.branchTo(must64(arm64.BCond(arm64.LO, 0)), back, false)
			a.Emit(arm64.Mov(8, a64Addr, r2))
			c.branchTo(must64(arm64.BL(0)), c.lk.probeOff, false)
			c.branchTo(must64(arm64.Cbz(8, a64Tmp, 0)), back, false)
			helpers = append(helpers, c.forward(must64(arm64.B(0))))
		})
	}
	if arr, known := c.knownArray(); known {
		// r1 is the constant of the lddw earlier in this block: no test
		// of r1 and no table.
		loadKey()
		if w, ok := arm64.CmpImm(8, key, int64(arr.N)); ok {
			a.Emit(w)
		} else {
			a.MovConst(8, a64Tmp, arr.N)
			a.Emit(arm64.Cmp(8, key, a64Tmp))
		}
		misses = append(misses, c.forward(must64(arm64.BCond(arm64.HS, 0))))
		a.MovConst(8, r0, arr.Base)
		if arr.Stride != 0 && arr.Stride&(arr.Stride-1) == 0 && arr.Stride <= 1<<16 {
			c.emit(arm64.ALUShifted(arm64.ADD, 8, r0, r0, key, arm64.LSL, uint8(bits.TrailingZeros64(arr.Stride))))
		} else {
			a.MovConst(8, a64Tmp, arr.Stride)
			a.Emit(arm64.Madd(8, r0, key, a64Tmp, r0))
		}
	} else {
		// x17 = r1 - table: a multiple of 16 inside the table, else the
		// helper's.
		a.MovConst(8, a64Tmp, c.lk.tableBase)
		a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp2, r1, a64Tmp))
		size := uint64(len(c.lk.arrays)) * engine.MapEntrySize
		if w, ok := arm64.CmpImm(8, a64Tmp2, int64(size)); ok {
			a.Emit(w)
		} else {
			a.MovConst(8, a64Tmp, size)
			a.Emit(arm64.Cmp(8, a64Tmp2, a64Tmp))
		}
		helpers = append(helpers, c.forward(must64(arm64.BCond(arm64.HS, 0))))
		c.emit(arm64.TstImm(8, a64Tmp2, engine.MapEntrySize-1))
		helpers = append(helpers, c.forward(must64(arm64.BCond(arm64.NE, 0))))
		// x20 = the entry's array info: base and stride; base 0: not an
		// array.
		c.lk.infoFixups = append(c.lk.infoFixups, a.Len())
		c.emit(arm64.Adr(info, 0))
		c.emit(arm64.ALUShifted(arm64.ADD, 8, info, info, a64Tmp2, arm64.LSL, 1))
		c.emit(arm64.Ldp(8, a64Tmp, a64Tmp2, info, 0, arm64.Offset))
		helpers = append(helpers, c.forward(must64(arm64.Cbz(8, a64Tmp, 0))))
		loadKey()
		c.emit(arm64.Load(8, a64Scratch2, info, 16))
		a.Emit(arm64.Cmp(8, key, a64Scratch2))
		misses = append(misses, c.forward(must64(arm64.BCond(arm64.HS, 0))))
		a.Emit(arm64.Madd(8, r0, key, a64Tmp2, a64Tmp))
	}
	if fused == frontend.NullTestNE {
		// The hit takes the jump: charge the stretch (the test's slot
		// too) and go.
		c.subBudget(cost + 1)
		c.jumpSlot(arm64.PL, false, target)
		c.leaveBudget(pc+1, target, true)
	}
	resume := a.Len()
	c.stubs = append(c.stubs, func() {
		// The miss: r0 = 0.
		for _, p := range misses {
			c.here(p)
		}
		a.Emit(arm64.Mov(8, r0, arm64.XZR))
		if fused == frontend.NullTestEQ {
			c.jumpEdge(pc+1, target, cost+1)
		} else {
			c.branchTo(must64(arm64.B(0)), resume, false)
		}
		if len(helpers) == 0 {
			return
		}
		// The helper: its call ends the stretch, so charge it and test.
		for _, p := range helpers {
			c.here(p)
		}
		c.chargeAndTest(pc, cost)
		c.leaveForHelper(pc, c.inlineHelperReason(pc))
		// Back from the helper: the inline paths go on with the stretch
		// uncharged from the block's start; so does this one.
		c.addImm(a64Budget, a64Budget, int64(cost))
		if fused != frontend.NullTestNone {
			ins := &c.insns[pc+1]
			c.emitCompare(ins)
			c.branchTo(must64(arm64.BCond(a64Conds[ins.Opcode>>4].Invert(), 0)), resume, false)
			c.jumpEdge(pc+1, target, cost+1)
		} else {
			c.branchTo(must64(arm64.B(0)), resume, false)
		}
	})
	return fused != frontend.NullTestNone
}

// jumpEdge emits the taken jump at slot pc to slot target with n slots of
// the stretch uncharged: charge them, and jump or leave for the budget.
func (c *a64Compiler) jumpEdge(pc, target, n int) {
	c.subBudget(n)
	c.jumpSlot(arm64.PL, false, target)
	c.leaveBudget(pc, target, true)
}

// chargeAndTest subtracts n slots from the budget and leaves at slot pc
// when it is overdrawn, resuming (in resumable code) right after.
func (c *a64Compiler) chargeAndTest(pc, n int) {
	c.subBudget(n)
	pos := c.forward(must64(arm64.BCond(arm64.MI, 0)))
	back := c.a.Len()
	c.stubs = append(c.stubs, func() {
		c.here(pos)
		c.leaveBudget(pc, back, false)
	})
}

// inlineHelperReason returns the exit reason of the helper call at slot
// pc that an inline lookup or update leaves to Go: that code already
// found the map is not one it answers, so Go does not look at arrays.
func (c *a64Compiler) inlineHelperReason(pc int) uint64 {
	kind := uint64(backend.ReasonHelper)
	switch h := c.prog.Helpers()[c.insns[pc].Imm]; {
	case h.ArrayLookup && h.HashLookup:
		kind = backend.ReasonHashLookup
	case h.HashUpdate:
		kind = backend.ReasonHashUpdate
	}
	reason := kind | uint64(len(c.helperExits))<<8
	c.helperExits = append(c.helperExits, int32(pc))
	return reason
}

// leaveForHelper leaves for Go to run the helper at slot pc, its budget
// already tested, and resumes right after.
func (c *a64Compiler) leaveForHelper(pc int, reason uint64) {
	c.setExitPC(pc)
	pos := c.adr()
	c.stState(a64Tmp, backend.OffResumePC)
	c.a.MovConst(8, a64Reason, reason)
	c.branchTo(must64(arm64.B(0)), c.leaveOff, false)
	c.adrHere(pos)
}

// emitKeyProbe emits the subroutine (BL) that the key checks of inline
// lookups call when the key is neither on the stack nor in the region of
// the last read. In: x19 = the key's address. Out: x16 = 0 when a region
// allows reading 4 bytes there (it becomes the hot read region), else
// not 0. It clobbers x17 and x20-x24.
func (c *a64Compiler) emitKeyProbe() {
	if !c.checked || !c.lk.lookups {
		return
	}
	a := c.a
	c.lk.probeOff = a.Len()
	end, r, n, lo, hi := a64Tmp2, a64Scratch, a64Scratch2, a64Scratch3, a64Scratch4
	c.emit(arm64.AddImm(8, end, a64Addr, 4))
	a.Emit(arm64.Cmp(8, end, a64Addr))
	overflow := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	c.ldState(r, backend.OffRegions)
	c.ldState(n, backend.OffNRegions)
	loop := a.Len()
	none := c.forward(must64(arm64.Cbz(8, n, 0)))
	c.emit(arm64.Load(8, lo, r, int64(engine.RegionLoOffset)))
	c.emit(arm64.Load(8, hi, r, int64(engine.RegionHiOffset)))
	a.Emit(arm64.Cmp(8, a64Addr, lo))
	next1 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	a.Emit(arm64.Cmp(8, end, hi))
	next2 := c.forward(must64(arm64.BCond(arm64.HI, 0)))
	// Allowed: the region becomes the hot read one, with end = size - 7,
	// or 0 if negative.
	a.Emit(arm64.ALUReg(arm64.SUB, 8, hi, hi, lo))
	c.emit(arm64.ALUImm(arm64.SUBS, 8, hi, hi, 7))
	a.Emit(arm64.Csel(8, hi, hi, arm64.XZR, arm64.HS))
	c.stState(lo, backend.OffHotReadLo)
	c.stState(hi, backend.OffHotReadLo+8)
	a.Emit(arm64.Mov(8, a64Tmp, arm64.XZR))
	a.Emit(arm64.Ret())
	c.here(next1)
	c.here(next2)
	c.emit(arm64.AddImm(8, r, r, int64(engine.RegionSize)))
	c.emit(arm64.AddImm(8, n, n, -1))
	c.branchTo(must64(arm64.B(0)), loop, false)
	c.here(overflow)
	c.here(none)
	c.emit(arm64.Movz(8, a64Tmp, 1, 0))
	a.Emit(arm64.Ret())
}

// emitArrayInfo emits the array table for the generic lookups emitted
// since the last one (after each flush of stubs, which their ADRs reach
// as the stubs' branches do).
func (c *a64Compiler) emitArrayInfo() {
	if len(c.lk.infoFixups) == 0 {
		return
	}
	a := c.a
	for a.Len()%8 != 0 {
		a.Emit(arm64.Brk(1))
	}
	off := a.Len()
	for _, arr := range c.lk.arrays {
		for _, v := range [4]uint64{arr.Base, arr.Stride, arr.N, 0} {
			a.Emit(uint32(v))
			a.Emit(uint32(v >> 32))
		}
	}
	for _, p := range c.lk.infoFixups {
		w, ok := arm64.Adr(a64Scratch, int64(off-p))
		if !ok {
			panic(errA64Encode)
		}
		a.Patch(p, w)
	}
	c.lk.infoFixups = c.lk.infoFixups[:0]
}
