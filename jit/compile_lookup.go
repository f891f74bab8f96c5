package jit

import (
	"math"

	"github.com/uebpf/uebpf/asm"
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
// vm.MapEntrySize = 16) times 2 indexes it.
const arrayInfoSize = 32

// isArrayLookup reports whether ins calls an ArrayLookup helper.
func (c *compiler) isArrayLookup(ins *asm.Instruction) bool {
	if ins.Opcode != asm.OpCall || ins.Src != 0 {
		return false
	}
	h, ok := c.prog.Helpers()[ins.Imm]
	return ok && h.ArrayLookup
}

// prepareLookups fetches the program's arrays when it calls an
// ArrayLookup helper, and turns inlining off when there is nothing to
// inline.
func (c *compiler) prepareLookups() {
	if !c.lookups {
		return
	}
	c.lookups = false
	if vm.MapEntrySize*2 != arrayInfoSize {
		return
	}
	c.tableBase, c.arrays = c.prog.ArrayMaps()
	if uint64(len(c.arrays))*vm.MapEntrySize > math.MaxInt32 {
		return
	}
	for _, a := range c.arrays {
		if a.Base != 0 {
			c.lookups = true
		}
	}
}

// trackR1 follows whether r1 holds a constant after slot pc (ins) in the
// current block.
func (c *compiler) trackR1(pc int, ins *asm.Instruction) {
	switch cl := ins.Class(); {
	case ins.Opcode == asm.OpLDDW:
		if ins.Dst == asm.R1 {
			c.r1Known, c.r1 = true, c.prog.Constant(pc)
		}
	case cl == asm.ClassST, cl == asm.ClassSTX && ins.Opcode&0xe0 != asm.ModeATOMIC:
	case (cl == asm.ClassALU || cl == asm.ClassALU64 || cl == asm.ClassLDX) && ins.Dst != asm.R1:
	default:
		c.r1Known = false
	}
}

// knownArray returns the array that r1 points to at this call, if known.
func (c *compiler) knownArray() (vm.ArrayMapInfo, bool) {
	if !c.r1Known {
		return vm.ArrayMapInfo{}, false
	}
	off := c.r1 - c.tableBase
	m := off / vm.MapEntrySize
	if off%vm.MapEntrySize != 0 || m >= uint64(len(c.arrays)) {
		return vm.ArrayMapInfo{}, false
	}
	a := c.arrays[m]
	if a.Base == 0 || a.Stride > math.MaxInt32 {
		return vm.ArrayMapInfo{}, false
	}
	return a, true
}

// emitArrayLookup emits the call at slot pc of an ArrayLookup helper.
func (c *compiler) emitArrayLookup(pc int) {
	a := c.a
	// The inline answer does not end the budget's stretch, and the
	// helper's exit below tests the budget only on its own path: charge
	// the block now, on every path.
	c.charge(pc + 1)
	r1, r2 := regMap[1], regMap[2]
	var toHelper, toZero, toNext []int
	keyStub := -1
	if c.checked {
		// The key: on the stack inline, elsewhere out of line (the region
		// of the last read, then the region list), or the helper's.
		a.MovRR(8, tmpAddr, r2)
		a.ALURM(x86.SUB, 8, tmpAddr, st(offStackLo))
		a.ALURI(x86.CMP, 8, tmpAddr, int32(vm.StackSize-4))
		keyStub = len(c.stubs)
		c.toStub(x86.CondA, stubKeyCheck, pc).resume = int32(a.Len())
	}
	known := false
	if arr, ok := c.knownArray(); ok {
		// r1 is the constant of the lddw earlier in this block: no test
		// of r1 and no generic path.
		known = true
		a.Load(4, tmpAddr, x86.M(r2, 0))
		a.ALURI(x86.CMP, 4, tmpAddr, int32(uint32(arr.N)))
		toZero = append(toZero, a.Jcc(x86.CondAE))
		a.MovRI(x86.RAX, arr.Base)
		switch arr.Stride {
		case 1, 2, 4, 8:
			a.Lea(x86.RAX, x86.MIndex(x86.RAX, tmpAddr, uint8(arr.Stride), 0))
		default:
			a.ImulRRI(8, tmpAddr, tmpAddr, int32(arr.Stride))
			a.ALURR(x86.ADD, 8, x86.RAX, tmpAddr)
		}
		toNext = append(toNext, a.Jmp())
	}
	if !known {
		// r11 = r1 - table: a multiple of 16 inside the table, else the helper's.
		a.MovRI(tmpAddr, -c.tableBase)
		a.ALURR(x86.ADD, 8, tmpAddr, r1)
		a.ALURI(x86.CMP, 8, tmpAddr, int32(uint64(len(c.arrays))*vm.MapEntrySize))
		toHelper = append(toHelper, a.Jcc(x86.CondAE))
		a.TestRI(4, tmpAddr, int32(vm.MapEntrySize-1))
		toHelper = append(toHelper, a.Jcc(x86.CondNE))
		// rcx = the entry's array info; base 0: not an array.
		c.infoFixups = append(c.infoFixups, int32(a.LeaRIP(tmpC)))
		a.Lea(tmpC, x86.MIndex(tmpC, tmpAddr, arrayInfoSize/uint8(vm.MapEntrySize), 0))
		a.ALUMI(x86.CMP, 8, x86.M(tmpC, 0), 0)
		toHelper = append(toHelper, a.Jcc(x86.CondE))
		a.Load(4, tmpAddr, x86.M(r2, 0))
		a.ALURM(x86.CMP, 8, tmpAddr, x86.M(tmpC, 16))
		toZero = append(toZero, a.Jcc(x86.CondAE))
		a.Load(8, x86.RAX, x86.M(tmpC, 8))
		a.ImulRR(8, x86.RAX, tmpAddr)
		a.ALURM(x86.ADD, 8, x86.RAX, x86.M(tmpC, 0))
		toNext = append(toNext, a.Jmp())
	}
	for _, p := range toZero {
		a.PatchRel32(p, a.Len())
	}
	a.ALURR(x86.XOR, 4, x86.RAX, x86.RAX)
	toNext = append(toNext, a.Jmp())
	for _, p := range toHelper {
		a.PatchRel32(p, a.Len())
	}
	if keyStub >= 0 {
		c.stubs[keyStub].helper = int32(a.Len())
	}
	c.emitHelperExit(pc, reasonHelper)
	for _, p := range toNext {
		a.PatchRel32(p, a.Len())
	}
}

// emitKeyCheck emits the out-of-line check of the key of an inline lookup
// that is not on the stack: resume if a region allows a 4-byte read at
// r2, else call the helper.
func (c *compiler) emitKeyCheck(s *stub) {
	a := c.a
	r2 := regMap[2]
	a.MovRR(8, tmpAddr, r2)
	a.ALURM(x86.SUB, 8, tmpAddr, st(offHotReadLo))
	a.ALURM(x86.CMP, 8, tmpAddr, st(offHotReadLo+8))
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
