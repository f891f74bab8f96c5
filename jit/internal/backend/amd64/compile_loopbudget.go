package amd64

import (
	"encoding/binary"
	"slices"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// Budget loops (frontend.BudgetLoop): a guard at the loop's head runs a
// copy of the loop, emitted after the body, when the budget register
// covers the most one iteration can charge:
//
//	body, at the head:   cmp budget, cost; jge copy    (the head's offset)
//	                     the ordinary loop: every charge tested
//	copy (64-aligned):   cmp budget, cost; jl body's loop
//	copy:                the loop, every charge a plain sub/adc/sbb/lea
//	                     and no test; back to its guard, or out to the
//	                     body's code
//
// An unconditional back edge tests and jumps in one: "cmp budget, cost;
// jge copy; jmp body's loop". The copy charges exactly what the ordinary
// code charges, slot for slot, so the two can hand over at any block
// start: jumps out of the copy go to the body's code, and a run that
// runs out of budget or ends a slice does so in the ordinary code, which
// stops where the interpreter does. Memory checks stay in the copy: their
// faults do not depend on the budget.

// loopBudgets turns budget loops on (SetLoopBudgets).
var loopBudgets = true

// SetLoopBudgets turns budget loops on or off, for tests and benchmarks,
// and returns a function that restores the setting.
func SetLoopBudgets(on bool) (restore func()) {
	old := loopBudgets
	loopBudgets = on
	return func() { loopBudgets = old }
}

// budgetGuard is where the guard of a budget loop is in the body: the
// guard at guard, the ordinary code of the head at loop, and toCopy the
// rel32 of the guard's jump to the copy.
type budgetGuard struct {
	guard, loop, toCopy int32
}

// emitBudgetGuard emits the guard of budget loop i at its head, in the
// body, and returns its offset, which is the head's.
func (c *compiler) emitBudgetGuard(i int) int32 {
	a, g := c.a, &c.budgetGuards[i]
	g.guard = int32(a.Len())
	a.ALURI(x86.CMP, 8, budgetReg, c.BudgetLoops[i].Cost)
	g.toCopy = int32(a.Jcc(x86.CondGE))
	if c.trap {
		// For tests: a run that does not take the copy here fails.
		c.jmpLeavePC(backend.ReasonBudget, c.BudgetLoops[i].Head)
	}
	g.loop = int32(a.Len())
	return g.guard
}

// emitBudgetCopies emits the copy of each budget loop, after the body.
func (c *compiler) emitBudgetCopies() error {
	if len(c.BudgetLoops) == 0 {
		return nil
	}
	a := c.a
	c.copyOffsets = slices.Grow(c.copyOffsets[:0], len(c.insns))[:len(c.insns)]
	for i := range c.BudgetLoops {
		l, g := &c.BudgetLoops[i], &c.budgetGuards[i]
		head, end := int(l.Head), int(l.End)
		// 64-byte aligned as loop heads are (alignLoopHead). Aligning
		// the copy's code instead, where a goto back edge goes, made no
		// difference on log2_int.
		a.Align(64)
		c.fastGuard = int32(a.Len())
		a.ALURI(x86.CMP, 8, budgetReg, l.Cost)
		a.JccTo(x86.CondL, int(g.loop))
		c.fastLoop = int32(a.Len())
		a.PatchRel32(int(g.toCopy), int(c.fastLoop))
		c.fast, c.fastIndex = l, i
		c.copyCharge = -1
		if err := c.emitCopy(head, end); err != nil {
			return err
		}
		c.fast = nil
		c.budgetLoops++
	}
	return nil
}

// jumpInCopy emits a jump (cond, or unconditional when always) to slot
// target from the copy of a budget loop: to its guard for the head, to
// the copy forward in the loop, to the body's code elsewhere.
func (c *compiler) jumpInCopy(cond x86.Cond, always bool, target int) {
	a, l := c.a, c.fast
	switch {
	case target == int(l.Head) && always:
		// Test and go round in one: jge copy, else the ordinary loop.
		a.ALURI(x86.CMP, 8, budgetReg, l.Cost)
		a.JccTo(x86.CondGE, int(c.fastLoop))
		a.JmpTo(int(c.budgetGuards[c.fastIndex].loop))
	case target == int(l.Head):
		a.JccTo(cond, int(c.fastGuard))
	case target > c.pc && target <= int(l.End):
		var pos int
		if always {
			pos = a.Jmp()
		} else {
			pos = a.Jcc(cond)
		}
		c.jumps = append(c.jumps, jumpFixup{pos: int32(pos), target: int32(target)})
	case always:
		a.JmpTo(int(c.offsets[target]))
	default:
		a.JccTo(cond, int(c.offsets[target]))
	}
}

// gotoInCopy emits the goto to target of the copy of a budget loop, which
// charges its stretch without a test.
func (c *compiler) gotoInCopy(target int) {
	c.charge(c.pc + 1)
	c.jumpInCopy(0, true, target)
}

// chargeInCopy charges the stretch up to the charging instruction being
// emitted in the copy of a budget loop, without a test, and returns a stub
// that is never emitted, for the caller to fill in as it would a test's.
func (c *compiler) chargeInCopy() *stub {
	c.charge(c.pc + 1)
	c.noStub = stub{}
	return &c.noStub
}

// budgetHead is called at each loop head pc when there are budget loops:
// in the body it emits the guard of the budget loop at pc, if any, and
// returns its offset; in a copy, heads get nothing (the copy's own head
// has its guard before it). -1: not a budget loop's head in the body.
func (c *compiler) budgetHead(pc int) int32 {
	if c.fast != nil {
		return 0
	}
	if i := c.BudgetLoopAt(pc); i >= 0 {
		return c.emitBudgetGuard(i)
	}
	return -1
}

// In the copy of a budget loop, charges that no jump separates can be
// one: the copy needs them exact only where it leaves, at a jump or at
// the guard, since it makes no test. mergesInCopy lets a stretch go on
// across the start of a block that the copy only falls into (a select's
// branchless join, say), and addToCopyCharge adds a charge to the last
// charging instruction instead of emitting one more. log2_int's loop has
// two instructions less for it, and ran 16 % faster with that and its
// 0/1 selects as setcc (zeroOneSelect). A run that leaves the copy
// otherwise fails (a fault, a misaligned atomic: budget loops make no
// calls), and reports what it executed only to within the program's
// length (vm.Env.Executed), as a run that fails in the middle of a block
// of the ordinary code does.

// mergesInCopy reports whether the stretch goes on at the block that
// starts at slot pc in the copy being emitted: no jump of the copy goes
// there but the branchless one of a select, which falls through.
func (c *compiler) mergesInCopy(pc int) bool {
	l := c.fast
	if pc == int(l.Head) {
		return false
	}
	for i := int(l.Head); i <= int(l.End); i++ {
		ins := &c.insns[i]
		if cl := ins.Class(); cl != asm.ClassJMP && cl != asm.ClassJMP32 || ins.Opcode == asm.OpCall || ins.Opcode == asm.OpExit {
			continue
		}
		if frontend.JumpTarget(i, ins) != pc {
			continue
		}
		if _, ok := c.SelectAt(i); !ok {
			return false
		}
	}
	return true
}

// noteCopyCharge records the charging instruction just emitted at start
// as the one later charges of the copy may add to.
func (c *compiler) noteCopyCharge(start int) {
	if c.fast != nil {
		c.copyCharge = start
	}
}

// addToCopyCharge adds n slots to the copy's last charging instruction
// (a sub, sbb or adc of the budget register with an immediate), if there
// is one and its immediate holds the sum, and reports whether it did.
func (c *compiler) addToCopyCharge(n int32) bool {
	p := c.copyCharge
	if p < 0 {
		return false
	}
	b := c.a.Bytes()
	// REX.W, 0x83 ib or 0x81 id, ModRM (reg: the operation), immediate:
	// the budget register is rdx, which needs no other REX bit.
	if b[p] != 0x48 {
		return false
	}
	if b[p+2]>>3&7 == byte(x86.ADC) {
		n = -n // adc adds a negative immediate
	}
	switch b[p+1] {
	case 0x83:
		v := int32(int8(b[p+3])) + n
		if v != int32(int8(v)) {
			return false
		}
		b[p+3] = byte(v)
	case 0x81:
		v := int32(binary.LittleEndian.Uint32(b[p+3:])) + n
		binary.LittleEndian.PutUint32(b[p+3:], uint32(v))
	default:
		return false
	}
	return true
}
