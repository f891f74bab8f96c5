package arm64

import (
	"fmt"

	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// Budget loops (frontend.BudgetLoop), as in the amd64 back end: a guard at
// the loop's head runs a copy of the loop, emitted after the body, when
// the budget register covers the most one iteration can charge:
//
//	body, at the head:   cmp x11, #cost; b.lt +8; b copy    (the head's offset)
//	                     the ordinary loop: every charge tested
//	copy:                cmp x11, #cost; b.lt stub (b body's loop)
//	                     the loop, every charge a plain sub and no test;
//	                     back to its guard, or out to the body's code
//
// The body's guard branches to the copy with a B, which reaches the copy
// however much code lies between (B.cond reaches ±1 MiB); it runs once
// per entry into the loop, the copy's own guard once per iteration. A
// goto back edge tests and goes round in one: "cmp x11, #cost; b.ge
// copy; b body's loop". The copy charges exactly what the body's loop
// charges, slot for slot, so the two can hand over at any block start:
// jumps out of the copy go to the body's code, and a run that runs out of
// budget or ends a slice does so in the body's loop, which stops where
// the interpreter does. Memory checks stay in the copy: their faults do
// not depend on the budget.

// loopBudgets turns budget loops on (SetLoopBudgets).
var loopBudgets = true

// SetLoopBudgets turns budget loops on or off, for tests and benchmarks,
// and returns a function that restores the setting.
func SetLoopBudgets(on bool) (restore func()) {
	old := loopBudgets
	loopBudgets = on
	return func() { loopBudgets = old }
}

// a64Budgeting is the emission state of the budget loops of a compile.
type a64Budgeting struct {
	// guards are what the guards in the body leave, by loop.
	guards []a64BudgetGuard
	// fast is the loop whose copy is being emitted, fastIndex its index,
	// fastGuard and fastLoop the offsets of the copy's guard and of its
	// code.
	fast                *frontend.BudgetLoop
	fastIndex           int
	fastGuard, fastLoop int32
	// loops counts the copies emitted, for tests.
	loops int
}

// a64BudgetGuard is where a budget loop's guard is in the body: the
// ordinary code of the head at loop, and toCopy the guard's B to the copy
// (0: no guard emitted).
type a64BudgetGuard struct {
	loop, toCopy int32
}

// enterBudgetLoop is called where the body's block at slot pc starts,
// before its code: at the head of a budget loop it emits the loop's guard
// and returns its offset, which is the head's; else -1.
func (c *a64Compiler) enterBudgetLoop(pc int) int {
	if len(c.BudgetLoops) == 0 || !c.LoopHead[pc] {
		return -1
	}
	i := c.BudgetLoopAt(pc)
	if i < 0 {
		return -1
	}
	a, l, g := c.a, &c.BudgetLoops[i], &c.budget.guards[i]
	guard := a.Len()
	c.cmpConst(a64Budget, int64(l.Cost))
	a.Emit(must64(arm64.BCond(arm64.LT, 8)))
	g.toCopy = int32(c.forward(must64(arm64.B(0))))
	if c.trap {
		// For tests: a run that does not take the copy here fails.
		c.leavePC(backend.ReasonBudget, pc, false)
	}
	g.loop = int32(a.Len())
	return guard
}

// emitBudgetCopies emits, after the body, the copy of each budget loop
// with its stubs.
func (c *a64Compiler) emitBudgetCopies() error {
	b := &c.budget
	for i := range c.BudgetLoops {
		l, g := &c.BudgetLoops[i], &b.guards[i]
		if g.toCopy == 0 {
			continue
		}
		a := c.a
		b.fastGuard = int32(a.Len())
		c.cmpConst(a64Budget, int64(l.Cost))
		c.outOfLine(arm64.LT, func() { c.branchTo(must64(arm64.B(0)), int(g.loop), false) })
		b.fastLoop = int32(a.Len())
		if err := a.PatchBranch(int(g.toCopy), int(b.fastLoop)); err != nil {
			return &vm.LoadError{Program: c.prog.Name(), Index: int(l.Head), Err: fmt.Errorf("jit: arm64: %w", err)}
		}
		b.fast, b.fastIndex = l, i
		err := c.emitCopy(int(l.Head), int(l.End))
		b.fast = nil
		if err != nil {
			return err
		}
		b.loops++
	}
	return nil
}

// jumpInCopy is jumpSlot in the copy of a budget loop: to the copy's
// guard for the head, to the copy forward in the loop, to the body's
// code elsewhere (copyJump).
func (c *a64Compiler) jumpInCopy(cond arm64.Cond, always bool, target int) {
	b := &c.budget
	if target != int(b.fast.Head) {
		c.copyJump(cond, always, target)
		return
	}
	if !always {
		c.branchTo(must64(arm64.BCond(cond, 0)), int(b.fastGuard), false)
		return
	}
	// Test and go round in one: b.ge the copy, else the body's loop.
	c.cmpConst(a64Budget, int64(b.fast.Cost))
	c.branchTo(must64(arm64.BCond(arm64.GE, 0)), int(b.fastLoop), false)
	c.branchTo(must64(arm64.B(0)), int(b.guards[b.fastIndex].loop), false)
}

// chargeInCopy charges the stretch up to the charging instruction being
// emitted in the copy of a budget loop, without a test: the guard made
// sure that the budget covers the whole iteration.
func (c *a64Compiler) chargeInCopy() {
	if !c.stretch.Uncharged {
		return
	}
	n := c.stretch.Pending(c.pc + 1)
	c.stretch.Charged()
	c.budgetSub(arm64.SUB, n)
}

// prepareBudgetLoops sizes what the guards leave, after the analysis.
func (c *a64Compiler) prepareBudgetLoops() {
	c.budget.guards = make([]a64BudgetGuard, len(c.BudgetLoops))
}

// BudgetLoops returns the number of loops of vp that the compiler runs
// with one budget test per iteration when compiling with o, for package
// jit's tests.
func BudgetLoops(vp *vm.Program, o *backend.Options) int {
	return counted(vp, o, func(c *a64Compiler) int { return c.budget.loops })
}
