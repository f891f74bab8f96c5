package amd64

import (
	"math"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// Inline array lookups. A call to an ArrayLookup helper (vm.Helper) is
// answered in generated code, as the interpreter answers it, when r1 is a
// map pointer (the address of an entry of the program's map table) to an
// array and the 4-byte key at r2 is readable: r0 = the element's address,
// or 0 past the end. Anything else takes the ordinary helper exit. The
// inline answer does not end the interpreter's straight-line stretch, so
// it tests no budget; the helper exit tests it as any call does.
//
// The generic code indexes a table emitted after the stubs with, for each
// entry of the map table, the array's base, stride and element count
// (arrayInfoSize bytes, base 0 for maps left to the helper). When r1 is
// known at compile time to hold the address of an array's entry (lddw r1,
// map earlier in the block), a faster path with that array's constants is
// tried first, behind a comparison of r1 with that address.

// arrayInfoSize is the size of an entry of the emitted array table: base,
// stride, count and padding, so that the map table offset (a multiple of
// engine.MapEntrySize = 16) times 2 indexes it.
const arrayInfoSize = 32

// isArrayLookup reports whether ins calls an ArrayLookup helper.
func (c *compiler) isArrayLookup(ins *asm.Instruction) bool {
	return frontend.IsArrayLookup(c.prog, ins)
}

// prepareLookups fetches the program's arrays when it calls an
// ArrayLookup helper, and turns inlining off when there is nothing to
// inline.
func (c *compiler) prepareLookups() {
	if !c.Lookups {
		return
	}
	if engine.MapEntrySize*2 != arrayInfoSize {
		return
	}
	c.tableBase, c.arrays = engine.ArrayMaps(unsafe.Pointer(c.prog))
	if uint64(len(c.arrays))*engine.MapEntrySize > math.MaxInt32 {
		return
	}
	for _, a := range c.arrays {
		if a.Base != 0 {
			c.inlineLookups = true
		}
	}
}

// knownArray returns the array that r1 points to at this call, if known.
func (c *compiler) knownArray() (engine.ArrayMap, bool) {
	m, ok := c.knownMap()
	if !ok || m >= len(c.arrays) {
		return engine.ArrayMap{}, false
	}
	a := c.arrays[m]
	if a.Base == 0 || a.Stride > math.MaxInt32 {
		return engine.ArrayMap{}, false
	}
	return a, true
}

// lookupPatch is a jump of an inline lookup to one of its out-of-line
// paths: the miss (r0 = 0) or the helper's exit.
type lookupPatch struct {
	pos    int32
	helper bool
}

// emitArrayLookup emits the call at slot pc of an ArrayLookup helper, and
// reports whether it also emitted the null test of r0 at pc+1. The hit
// path is inline; the miss (r0 = 0) and the helper's exit are out of line
// (emitLookupStub). With the null test answered too, the hit path knows
// r0 is not 0 and the miss path that it is: neither tests it.
func (c *compiler) emitArrayLookup(pc int) bool {
	a := c.a
	// The inline answer does not end the budget's stretch: the hit and
	// the miss go on with the block uncharged. The helper's exit, out of
	// line, charges the stretch up to the call, tests it, and after the
	// helper gives the slots back, so that all paths go on alike.
	cost := int32(pc + 1 - c.stretch.Start)
	r1, r2 := regMap[1], regMap[2]
	fused, t := c.NullTestAfter(pc)
	target := int32(t)
	si := len(c.stubs)
	s := c.addStub(-1, stubLookup, pc)
	s.target, s.fused, s.helper, s.off = int32(len(c.lookupPatches)), fused, target, -1
	s.cost = cost
	patch := func(pos int, helper bool) {
		c.lookupPatches = append(c.lookupPatches, lookupPatch{pos: int32(pos), helper: helper})
	}
	// The key: a slot of the current frame needs no check, and may be
	// known to hold a register.
	keyOff, keyInFrame := c.frameOff(asm.R2, 0)
	keyInFrame = keyInFrame && keyOff >= -vm.StackFrameSize && keyOff <= -4
	keyReg, keyKnown := uint8(0), false
	if keyInFrame {
		keyReg, keyKnown = c.keySlot(keyOff)
	}
	loadKey := func() {
		if keyKnown {
			a.MovRR(4, tmpAddr, regMap[keyReg])
		} else {
			a.Load(4, tmpAddr, x86.M(r2, 0))
		}
	}
	if c.checked && !keyInFrame {
		// The key: on the stack inline, elsewhere out of line (the region
		// of the last read, then the region list), or the helper's.
		a.MovRR(8, tmpAddr, r2)
		a.ALURM(x86.SUB, 8, tmpAddr, st(backend.OffStackLo))
		a.ALURI(x86.CMP, 8, tmpAddr, int32(vm.StackSize-4))
		c.stubs[si].off = int32(len(c.stubs))
		c.toStub(x86.CondA, stubKeyCheck, pc).resume = int32(a.Len())
	}
	arr, known := c.knownArray()
	if known {
		// r1 is the constant of the lddw earlier in this block: no test
		// of r1 and no generic path.
		loadKey()
		a.ALURI(x86.CMP, 4, tmpAddr, int32(uint32(arr.N)))
		patch(a.Jcc(x86.CondAE), false)
		a.MovRI(x86.RAX, arr.Base)
		switch arr.Stride {
		case 1, 2, 4, 8:
			a.Lea(x86.RAX, x86.MIndex(x86.RAX, tmpAddr, uint8(arr.Stride), 0))
		default:
			a.ImulRRI(8, tmpAddr, tmpAddr, int32(arr.Stride))
			a.ALURR(x86.ADD, 8, x86.RAX, tmpAddr)
		}
	} else {
		// r11 = r1 - table: a multiple of 16 inside the table, else the helper's.
		a.MovRI(tmpAddr, -c.tableBase)
		a.ALURR(x86.ADD, 8, tmpAddr, r1)
		a.ALURI(x86.CMP, 8, tmpAddr, int32(uint64(len(c.arrays))*engine.MapEntrySize))
		patch(a.Jcc(x86.CondAE), true)
		a.TestRI(4, tmpAddr, int32(engine.MapEntrySize-1))
		patch(a.Jcc(x86.CondNE), true)
		// rcx = the entry's array info; base 0: not an array.
		c.infoFixups = append(c.infoFixups, int32(a.LeaRIP(tmpC)))
		a.Lea(tmpC, x86.MIndex(tmpC, tmpAddr, arrayInfoSize/uint8(engine.MapEntrySize), 0))
		a.ALUMI(x86.CMP, 8, x86.M(tmpC, 0), 0)
		patch(a.Jcc(x86.CondE), true)
		if keyKnown {
			a.MovRR(4, tmpAddr, regMap[keyReg])
		} else {
			a.Load(4, tmpAddr, x86.M(r2, 0))
		}
		a.ALURM(x86.CMP, 8, tmpAddr, x86.M(tmpC, 16))
		patch(a.Jcc(x86.CondAE), false)
		a.Load(8, x86.RAX, x86.M(tmpC, 8))
		a.ImulRR(8, x86.RAX, tmpAddr)
		a.ALURM(x86.ADD, 8, x86.RAX, x86.M(tmpC, 0))
	}
	s = &c.stubs[si]
	s.n = int32(len(c.lookupPatches)) - s.target
	if !known || s.off >= 0 {
		s.size = 1 // a helper path
	}
	if fused == frontend.NullTestNE {
		// The hit path takes the jump: charge the stretch (the test's
		// slot) and go.
		a.ALURI(x86.SUB, 8, budgetReg, cost+1)
		c.jumpToSlot(x86.CondNS, false, int(target))
		c.toStub(x86.CondS, stubBudget, pc+1).target = target + 1
	}
	c.stubs[si].resume = int32(a.Len())
	return fused != frontend.NullTestNone
}

// emitLookupStub emits the out-of-line paths of an inline lookup (s,
// a stubLookup): the miss, and the helper's exit when the lookup has one.
// Both continue with the null test that the lookup answers, if any, and
// then at s.resume.
func (c *compiler) emitLookupStub(s *stub) {
	a := c.a
	miss := a.Len()
	a.ALURR(x86.XOR, 4, x86.RAX, x86.RAX)
	if s.fused == frontend.NullTestEQ {
		c.emitEdge(s.pc+1, s.helper, s.cost+1)
	} else {
		a.JmpTo(int(s.resume))
	}
	helper := -1
	if s.size != 0 {
		helper = a.Len()
		// The helper's call ends the stretch: charge it and test.
		a.ALURI(x86.SUB, 8, budgetReg, s.cost)
		a.JccShort(x86.CondNS, 0)
		skip := a.Len()
		c.leaveBudget(s.pc, -1)
		a.Bytes()[skip-1] = byte(a.Len() - skip)
		c.emitHelperLeave(int(s.pc), c.helperReason(int(s.pc)))
		// Back from the helper: the inline paths go on with the stretch
		// uncharged from the block's start; so does this one, the next
		// charge counting only the slots after the call.
		a.ALURI(x86.ADD, 8, budgetReg, s.cost)
		if s.fused != frontend.NullTestNone {
			ins := &c.insns[s.pc+1]
			c.emitCompare(ins)
			a.JccTo(jumpConds[ins.Opcode>>4].Invert(), int(s.resume))
			c.emitEdge(s.pc+1, s.helper, s.cost+1)
		} else {
			a.JmpTo(int(s.resume))
		}
		if s.off >= 0 {
			c.stubs[s.off].helper = int32(helper)
		}
	}
	for _, p := range c.lookupPatches[s.target : s.target+s.n] {
		if p.helper {
			a.PatchRel32(int(p.pos), helper)
		} else {
			a.PatchRel32(int(p.pos), miss)
		}
	}
}

// emitKeyCheck emits the out-of-line check of the key of an inline lookup
// that is not on the stack: resume if a region allows a 4-byte read at
// r2, else call the helper.
func (c *compiler) emitKeyCheck(s *stub) {
	a := c.a
	r2 := regMap[2]
	a.MovRR(8, tmpAddr, r2)
	a.ALURM(x86.SUB, 8, tmpAddr, st(backend.OffHotReadLo))
	a.ALURM(x86.CMP, 8, tmpAddr, st(backend.OffHotReadLo+8))
	a.JccTo(x86.CondB, int(s.resume))
	a.Push(budgetReg)
	a.MovRI32(tmpD, 4)
	a.ALURR(x86.XOR, 4, tmpC, tmpC)
	a.MovRR(8, tmpAddr, r2)
	a.PatchRel32(a.Call(), c.regionProbeOff)
	a.Pop(budgetReg)
	a.TestRR(4, tmpC, tmpC)
	a.JccTo(x86.CondE, int(s.resume))
	a.JmpTo(int(s.helper))
}

// emitArrayInfo emits the array table that the generic lookups index.
func (c *compiler) emitArrayInfo() {
	if len(c.infoFixups) == 0 {
		return
	}
	a := c.a
	for a.Len()%8 != 0 {
		a.Int3()
	}
	off := a.Len()
	for _, arr := range c.arrays {
		a.Quad(arr.Base)
		a.Quad(arr.Stride)
		a.Quad(arr.N)
		a.Quad(0)
	}
	for _, p := range c.infoFixups {
		a.PatchRel32(int(p), off)
	}
}
