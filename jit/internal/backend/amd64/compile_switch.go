package amd64

import "github.com/uebpf/uebpf/jit/internal/x86"

// Switch dispatches: the front end finds the compare trees worth a jump
// table (frontend.Switch); the x86 back end emits each dispatch in front
// of its tree and the tables after the stubs.

// switchPatch is what the emission of a dispatch leaves for its table.
type switchPatch struct {
	table int32 // the rel32 of the dispatch's lea of the table
	pre   int32 // slots of the block before the root, not yet charged
}

// emitSwitch emits the dispatch of s in front of its root's code, which
// follows it:
//
//	mov r11, reg; sub r11, lo
//	cmp r11, entries-1; ja tree
//	lea rcx, [rip+table]
//	sub rdx, [rcx+r11*8]   ; the charge
//	js refund              ; add it back, jmp tree
//	movsxd r11, [rcx+r11*4+charges]
//	add r11, rcx
//	jmp r11
//	tree:
func (c *compiler) emitSwitch(i int) {
	a, s := c.a, &c.Switches[i]
	p := &c.switchPatches[i]
	size := 4
	if s.Wide {
		size = 8
	}
	p.pre = int32(c.pc - c.stretch.Start)
	a.MovRR(size, tmpAddr, regMap[s.Reg])
	if s.Lo != 0 {
		a.ALURI(x86.SUB, size, tmpAddr, int32(s.Lo))
	}
	a.ALURI(x86.CMP, size, tmpAddr, int32(len(s.Leaves)-1))
	outside := a.Jcc(x86.CondA)
	p.table = int32(a.LeaRIP(tmpC))
	a.ALURM(x86.SUB, 8, budgetReg, x86.MIndex(tmpC, tmpAddr, 8, 0))
	refund := c.addStub(a.Jcc(x86.CondS), stubSwitchRefund, c.pc)
	a.LoadSX(4, tmpAddr, x86.MIndex(tmpC, tmpAddr, 4, int32(8*len(s.Leaves))))
	a.ALURR(x86.ADD, 8, tmpAddr, tmpC)
	a.JmpReg(tmpAddr)
	a.PatchRel32(outside, a.Len())
	refund.resume = int32(a.Len())
}

// emitRefund emits a stubSwitchRefund: the budget cannot pay a
// dispatch's charge, so it gets it back and the tree runs.
func (c *compiler) emitRefund(s *stub) {
	c.a.ALURM(x86.ADD, 8, budgetReg, x86.MIndex(tmpC, tmpAddr, 8, 0))
	c.a.JmpTo(int(s.resume))
}

// emitSwitchTables emits the tables of the dispatches, once the code of
// every slot is in place: for each, the charges (8 bytes each), then the
// offsets of the leaves from the table (4 bytes each).
func (c *compiler) emitSwitchTables() {
	a := c.a
	for i := range c.Switches {
		s, p := &c.Switches[i], &c.switchPatches[i]
		for a.Len()%8 != 0 {
			a.Int3()
		}
		table := a.Len()
		a.PatchRel32(int(p.table), table)
		for _, n := range s.Slots {
			a.Quad(uint64(p.pre + n))
		}
		for _, leaf := range s.Leaves {
			a.Dword(c.offsets[leaf] - int32(table))
		}
	}
}
