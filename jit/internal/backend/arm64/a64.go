package arm64

import (
	"errors"
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// The arm64 back end. It follows the run protocol of the x86 one (the
// state in the Env, exits to Go with a reason, the budget charged per
// stretch as the interpreter charges it) with some of its optimisations:
// inline array lookups (compile_lookup.go), inline hash updates
// (compile_hash.go), hoisted loop checks (compile_hoist.go), selects
// without a branch (compile_select.go) and budget loops
// (compile_loopbudget.go); not the others: no switch tables, no
// register tracking inside blocks beyond what lookups and updates need,
// no division by constants.
//
// eBPF registers live in X0-X10 (r0 in X0, r10 in X10); X11 holds the
// budget, X12 the run state and X13 the native stack pointer of local
// calls. X14-X17 and X19-X25 are scratch. X18 and X26-X29 are never
// touched; X30 takes the return addresses of BL, and the trampoline's is
// kept in the state (runState.nativeBase) from entry to exit.
//
// The native stack of local calls (40 bytes per call: the return address
// and r6-r9) is not the machine stack but the run's save area, a Go
// buffer that lives as long as the run: nothing needs copying when the
// code returns to Go in the middle of a call, and runState.live records
// how much of it is in use.
const (
	a64Budget   = arm64.X11
	a64State    = arm64.X12
	a64Native   = arm64.X13
	a64Reason   = arm64.X14 // exit reason, read by the trampoline
	a64Tmp      = arm64.X16 // immediates
	a64Tmp2     = arm64.X17
	a64Addr     = arm64.X19 // the address of a checked access
	a64Scratch  = arm64.X20 // region walk, atomics
	a64Scratch2 = arm64.X21
	a64Scratch3 = arm64.X22
	a64Scratch4 = arm64.X23
	a64Scratch5 = arm64.X24

	a64FrameBytes = 40 // one local call on the native stack
)

// a64Regs maps eBPF registers to A64 ones.
var a64Regs = [11]arm64.Reg{arm64.X0, arm64.X1, arm64.X2, arm64.X3, arm64.X4, arm64.X5, arm64.X6, arm64.X7, arm64.X8, arm64.X9, arm64.X10}

// a64Conds maps the high nibble of a conditional jump to its condition.
var a64Conds = [16]arm64.Cond{
	asm.JmpJEQ >> 4: arm64.EQ, asm.JmpJNE >> 4: arm64.NE, asm.JmpJSET >> 4: arm64.NE,
	asm.JmpJGT >> 4: arm64.HI, asm.JmpJGE >> 4: arm64.HS, asm.JmpJLT >> 4: arm64.LO, asm.JmpJLE >> 4: arm64.LS,
	asm.JmpJSGT >> 4: arm64.GT, asm.JmpJSGE >> 4: arm64.GE, asm.JmpJSLT >> 4: arm64.LT, asm.JmpJSLE >> 4: arm64.LE,
}

// errA64Encode is what an encoder that cannot encode its operands panics
// with inside the compiler; compile turns it into an error with the pc.
var errA64Encode = errors.New("operands cannot be encoded")

// a64Fixup is a branch (or ADR) at pos that must reach slot target (or,
// with label set, code offset target).
type a64Fixup struct {
	pos, target int32
	label, adr  bool
}

// a64Compiler translates one vm.Program into A64 code. Layout: the enter,
// leave, abort and region-check stubs, the start stub, the body (one
// sequence per slot) and the out-of-line paths.
type a64Compiler struct {
	a       *arm64.Asm
	prog    *vm.Program
	insns   []asm.Instruction
	checked bool
	lse     bool
	tag     uint32
	// blind: program constants are loaded XORed with key (Options.Blind).
	blind bool
	key   uint64

	frontend.Analysis
	tr   frontend.Tracking // what is known inside the block (compile_lookup.go)
	lk   a64Inline         // inline lookups and hash updates
	trap bool              // Options.TrapSlowPaths

	offsets     []int32
	fixups      []a64Fixup
	stubs       []func()
	helperExits []int32

	pc      int
	stretch frontend.Stretch // the budget stretch being emitted
	// stubsDone stubs are emitted; the last island of stubs ended at
	// islandAt (see flushStubs).
	stubsDone, islandAt int

	// hoist is the emission state of hoisted loop checks
	// (compile_hoist.go).
	hoist a64Hoisting
	// budget is the emission state of budget loops
	// (compile_loopbudget.go).
	budget a64Budgeting
	// selects counts the selects emitted without a branch
	// (compile_select.go), for tests.
	selects int

	enterOff, startOff, bodyOff, bodyEnd    int
	leaveOff, leaveFinalOff, abortOff       int
	regionCheckOff, misalignedOff, depthOff int
}

func newA64Compiler(p *vm.Program, checked, lse bool, tag uint32) *a64Compiler {
	insns := p.Instructions()
	return &a64Compiler{
		a:       arm64.NewAsm(8 * len(insns)),
		prog:    p,
		insns:   insns,
		checked: checked,
		lse:     lse,
		tag:     tag,
		offsets: make([]int32, len(insns)),
	}
}

// emit appends w, which an encoder returned with ok.
func (c *a64Compiler) emit(w uint32, ok bool) {
	if !ok {
		panic(errA64Encode)
	}
	c.a.Emit(w)
}

// resumable: the code can run long, so budget failures end a slice.
func (c *a64Compiler) resumable() bool { return c.Loops || c.Local }

// compile emits the whole program and returns its code.
func (c *a64Compiler) compile() (code []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			e, ok := v.(error)
			if !ok || !errors.Is(e, errA64Encode) {
				panic(v)
			}
			err = &vm.LoadError{Program: c.prog.Name(), Index: c.pc, Err: fmt.Errorf("jit: arm64: %w", e)}
		}
	}()
	if err := c.Analyze(c.prog, c.analysisOptions()); err != nil {
		return nil, err
	}
	c.prepareHoists()
	c.prepareBudgetLoops()
	c.prepareLookups()
	c.emitShared()
	c.emitStart()
	c.bodyOff = c.a.Len()
	for pc := 0; pc < len(c.insns); pc++ {
		if c.a.Len()-c.islandAt > a64IslandEvery && c.stubsDone < len(c.stubs) {
			// An island of the stubs so far, jumped over, keeps them
			// within reach of their B.cond (±1 MiB) in large programs.
			over := c.forward(must64(arm64.B(0)))
			c.flushStubs()
			c.here(over)
			c.islandAt = c.a.Len()
		}
		head := -1 // a budget loop's guard, at its head
		if c.Starts[pc] {
			if n := c.stretch.Pending(pc); n > 0 {
				// The block falls into a jump target: charge it
				// without a test (the stretch goes on).
				c.subBudget(n)
			}
			c.stretch.Begin(pc)
			c.tr.Reset()
			c.enterHoisted(pc)
			head = c.enterBudgetLoop(pc)
		}
		c.pc = pc
		c.offsets[pc] = int32(c.a.Len())
		if head >= 0 {
			c.offsets[pc] = int32(head)
		}
		c.emitLoopTrap(pc)
		if sel, ok := c.selectAt(pc); ok {
			pc = c.emitSelect(pc, sel, c.offsets)
			c.stretch.Next(pc)
			continue
		}
		ins := &c.insns[pc]
		if err := c.emitInsn(pc, ins); err != nil {
			return nil, &vm.LoadError{Program: c.prog.Name(), Index: pc, Err: fmt.Errorf("jit: %w", err)}
		}
		c.track(pc, ins)
		if c.lk.fused { // the lookup answered the null test after it too
			c.lk.fused = false
			pc++
			c.offsets[pc] = int32(c.a.Len())
		}
		if ins.Opcode == asm.OpLDDW {
			pc++
			c.offsets[pc] = c.offsets[pc-1]
		}
		c.stretch.Next(pc)
	}
	c.bodyEnd = c.a.Len()
	c.a.Emit(arm64.Brk(1)) // unreachable: validation forbids falling off the end
	c.flushStubs()
	if err := c.emitLoopCopies(); err != nil {
		return nil, err
	}
	if err := c.emitBudgetCopies(); err != nil {
		return nil, err
	}
	for _, f := range c.fixups {
		target := int(f.target)
		if !f.label {
			target = int(c.offsets[target])
		}
		if f.adr {
			w, ok := arm64.Adr(a64Tmp, int64(target-int(f.pos)))
			if !ok {
				return nil, &vm.LoadError{Program: c.prog.Name(), Index: c.pc, Err: fmt.Errorf("jit: arm64: adr: %w", arm64.ErrOutOfRange)}
			}
			c.a.Patch(int(f.pos), w)
			continue
		}
		if err := c.a.PatchBranch(int(f.pos), target); err != nil {
			return nil, &vm.LoadError{Program: c.prog.Name(), Index: c.pc, Err: fmt.Errorf("jit: arm64: %w", err)}
		}
	}
	return c.a.Bytes(), nil
}

// a64IslandEvery is how much code may separate out-of-line stubs from
// the branches to them.
const a64IslandEvery = 256 << 10

// flushStubs emits the out-of-line stubs not emitted yet.
func (c *a64Compiler) flushStubs() {
	for c.stubsDone < len(c.stubs) {
		f := c.stubs[c.stubsDone]
		c.stubsDone++
		f()
	}
	c.emitArrayInfo()
}

// emitInsn emits the code of the instruction at slot pc.
func (c *a64Compiler) emitInsn(pc int, ins *asm.Instruction) error {
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		return c.emitALU(ins)
	case asm.ClassJMP, asm.ClassJMP32:
		return c.emitJump(pc, ins)
	case asm.ClassLDX:
		c.emitLoad(pc, ins)
	case asm.ClassST, asm.ClassSTX:
		if ins.Opcode&0xe0 == asm.ModeATOMIC {
			return c.emitAtomic(pc, ins)
		}
		c.emitStore(pc, ins)
	case asm.ClassLD:
		if ins.Opcode == asm.OpLDDW {
			c.movConst(a64Regs[ins.Dst], backend.Constant(c.prog, pc), 8)
			return nil
		}
		c.emitPacketLoad(pc, ins)
	default:
		return fmt.Errorf("%w %#02x", vm.ErrUnknownOpcode, ins.Opcode)
	}
	return nil
}

// Branches to patch.

// branch emits w (a branch with offset 0) to code offset target, or to
// slot target when slot is set.
func (c *a64Compiler) branchTo(w uint32, target int, slot bool) {
	pos := c.a.Len()
	c.a.Emit(w)
	if !slot && target <= pos {
		if err := c.a.PatchBranch(pos, target); err != nil {
			panic(fmt.Errorf("%w: %w", errA64Encode, err))
		}
		return
	}
	c.fixups = append(c.fixups, a64Fixup{pos: int32(pos), target: int32(target), label: !slot})
}

// jumpSlot branches (on cond, or always) to slot target.
func (c *a64Compiler) jumpSlot(cond arm64.Cond, always bool, target int) {
	if c.budget.fast != nil {
		c.jumpInCopy(cond, always, target)
		return
	}
	if c.hoist.copying != nil {
		c.copyJump(cond, always, target)
		return
	}
	if always {
		c.branchTo(must64(arm64.B(0)), target, true)
	} else {
		c.branchTo(must64(arm64.BCond(cond, 0)), target, true)
	}
}

// forward emits a branch whose target comes later: patch it with here.
func (c *a64Compiler) forward(w uint32) int {
	pos := c.a.Len()
	c.a.Emit(w)
	return pos
}

// here points the forward branch at pos to the current offset.
func (c *a64Compiler) here(pos int) {
	if err := c.a.PatchBranch(pos, c.a.Len()); err != nil {
		panic(fmt.Errorf("%w: %w", errA64Encode, err))
	}
}

// adr emits "adr x16, label" for a label patched later by adrHere.
func (c *a64Compiler) adr() int {
	pos := c.a.Len()
	c.emit(arm64.Adr(a64Tmp, 0))
	return pos
}

// adrHere points the ADR at pos to the current offset.
func (c *a64Compiler) adrHere(pos int) {
	w, ok := arm64.Adr(a64Tmp, int64(c.a.Len()-pos))
	if !ok {
		panic(errA64Encode)
	}
	c.a.Patch(pos, w)
}

// outOfLine emits a conditional branch to code that f emits after the
// body.
func (c *a64Compiler) outOfLine(cond arm64.Cond, f func()) {
	pos := c.forward(must64(arm64.BCond(cond, 0)))
	c.stubs = append(c.stubs, func() {
		c.here(pos)
		f()
	})
}

func must64(w uint32, ok bool) uint32 {
	if !ok {
		panic(errA64Encode)
	}
	return w
}

// State access.

func (c *a64Compiler) ldState(rt arm64.Reg, off int32) {
	c.emit(arm64.Load(8, rt, a64State, int64(off)))
}

func (c *a64Compiler) stState(rt arm64.Reg, off int32) {
	c.emit(arm64.Store(8, rt, a64State, int64(off)))
}

// addImm emits rd = rn + imm (64-bit), through x16 when imm does not fit;
// rn must not be x16.
func (c *a64Compiler) addImm(rd, rn arm64.Reg, imm int64) {
	if w, ok := arm64.AddImm(8, rd, rn, imm); ok {
		c.a.Emit(w)
		return
	}
	c.a.MovConst(8, a64Tmp, uint64(imm))
	c.a.Emit(arm64.ALUReg(arm64.ADD, 8, rd, rn, a64Tmp))
}

// movImm loads a program's immediate, zero-extended from 32 bits (size
// 4) or sign-extended, blinded when asked; rd must not be x17.
func (c *a64Compiler) movImm(rd arm64.Reg, imm int32, size int) {
	c.movConst(rd, immValue(imm, size), size)
}

// movConst loads a program's constant of size bytes, blinded when asked:
// the constant never appears in the code, only v^key and key.
func (c *a64Compiler) movConst(rd arm64.Reg, v uint64, size int) {
	if !c.blind || v == 0 {
		c.a.MovConst(size, rd, v)
		return
	}
	c.a.MovConst(size, rd, v^c.key)
	c.a.MovConst(size, a64Tmp2, c.key)
	c.a.Emit(arm64.ALUReg(arm64.EOR, size, rd, rd, a64Tmp2))
}

// Shared stubs.

func (c *a64Compiler) emitShared() {
	a := c.a
	// enter: resume a run at resumePC with everything from the state.
	c.enterOff = a.Len()
	c.stState(arm64.RegLR, backend.OffNativeBase)
	c.ldState(a64Native, backend.OffSaveArea)
	c.ldState(a64Tmp, backend.OffLive)
	a.Emit(arm64.ALUReg(arm64.ADD, 8, a64Native, a64Native, a64Tmp))
	for i, r := range a64Regs {
		c.ldState(r, backend.OffRegs+8*int32(i))
	}
	c.ldState(a64Budget, backend.OffBudget)
	c.ldState(a64Tmp, backend.OffResumePC)
	a.Emit(arm64.Br(a64Tmp))

	// leave: for exits Go resumes from, with the reason in x14; r0 and
	// the budget stay in x0 and x11, which the trampoline stores.
	c.leaveOff = a.Len()
	for i, r := range a64Regs[1:] {
		c.stState(r, backend.OffRegs+8*int32(i+1))
	}
	c.ldState(a64Tmp, backend.OffSaveArea)
	a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp, a64Native, a64Tmp))
	c.stState(a64Tmp, backend.OffLive)
	c.leaveFinalOff = a.Len()
	c.ldState(arm64.RegLR, backend.OffNativeBase)
	a.Emit(arm64.Ret())

	// abort: a packet load outside the packet ends the run with r0 = 0.
	c.abortOff = a.Len()
	a.Emit(arm64.Mov(8, arm64.X0, arm64.XZR))
	a.Emit(arm64.Mov(8, a64Reason, arm64.XZR))
	c.branchTo(must64(arm64.B(0)), c.leaveFinalOff, false)

	// misaligned atomic: x19 = address, x17 = size, exitPC set.
	c.misalignedOff = a.Len()
	c.stState(a64Addr, backend.OffExitAddr)
	c.stState(a64Tmp2, backend.OffExitSize)
	a.MovConst(8, a64Reason, backend.ReasonMisaligned)
	c.branchTo(must64(arm64.B(0)), c.leaveFinalOff, false)

	if c.checked {
		c.emitRegionCheck()
		c.emitKeyProbe()
	}
}

// emitRegionCheck emits the subroutine (BL) that checked accesses call
// when their inline test fails. In: x19 = address, x17 = size, x16 = 1
// for a write, exitPC set. It returns when the stack or a region allows
// the access, remembering the region for the inline tests of that kind,
// and otherwise leaves with backend.ReasonFault.
func (c *a64Compiler) emitRegionCheck() {
	a := c.a
	c.regionCheckOff = a.Len()
	end, lo, n, t, u := a64Scratch, a64Scratch2, a64Scratch3, a64Scratch4, a64Scratch5
	a.Emit(arm64.ALUReg(arm64.ADD, 8, end, a64Addr, a64Tmp2))
	a.Emit(arm64.Cmp(8, end, a64Addr))
	fault1 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	// The stack: addr - stackLo <= StackSize - size.
	c.ldState(lo, backend.OffStackLo)
	a.Emit(arm64.ALUReg(arm64.SUB, 8, t, a64Addr, lo))
	a.MovConst(8, u, vm.StackSize)
	a.Emit(arm64.ALUReg(arm64.SUB, 8, u, u, a64Tmp2))
	a.Emit(arm64.Cmp(8, t, u))
	notStack := c.forward(must64(arm64.BCond(arm64.HI, 0)))
	a.Emit(arm64.Ret())
	c.here(notStack)
	c.ldState(lo, backend.OffRegions)
	c.ldState(n, backend.OffNRegions)
	loop := a.Len()
	fault2 := c.forward(must64(arm64.Cbz(8, n, 0)))
	c.emit(arm64.Load(8, t, lo, int64(engine.RegionLoOffset)))
	a.Emit(arm64.Cmp(8, a64Addr, t))
	next1 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	c.emit(arm64.Load(8, u, lo, int64(engine.RegionHiOffset)))
	a.Emit(arm64.Cmp(8, end, u))
	next2 := c.forward(must64(arm64.BCond(arm64.HI, 0)))
	c.emit(arm64.Load(1, u, lo, int64(engine.RegionWritableOffset)))
	a.Emit(arm64.Cmp(8, u, a64Tmp))
	next3 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	// Allowed: the region becomes the hot one of its kind (hot*Lo/End
	// pairs are 16 bytes apart), with end = size - 7, or 0 if negative.
	c.emit(arm64.Load(8, u, lo, int64(engine.RegionHiOffset)))
	a.Emit(arm64.ALUReg(arm64.SUB, 8, u, u, t))
	c.emit(arm64.ALUImm(arm64.SUBS, 8, u, u, 7))
	a.Emit(arm64.Csel(8, u, u, arm64.XZR, arm64.HS))
	c.emit(arm64.ALUShifted(arm64.ADD, 8, n, a64State, a64Tmp, arm64.LSL, 4))
	c.emit(arm64.Store(8, t, n, int64(backend.OffHotReadLo)))
	c.emit(arm64.Store(8, u, n, int64(backend.OffHotReadLo+8)))
	a.Emit(arm64.Ret())
	c.here(next1)
	c.here(next2)
	c.here(next3)
	c.emit(arm64.AddImm(8, lo, lo, int64(engine.RegionSize)))
	c.emit(arm64.AddImm(8, n, n, -1))
	c.branchTo(must64(arm64.B(0)), loop, false)
	c.here(fault1)
	c.here(fault2)
	c.stState(a64Addr, backend.OffExitAddr)
	c.stState(a64Tmp2, backend.OffExitSize)
	a.MovConst(8, a64Reason, backend.ReasonFault)
	c.branchTo(must64(arm64.B(0)), c.leaveFinalOff, false)
}

// emitStart emits the entry point of a run: the arguments and r10 from
// the Env, the other registers 0, the per-run fields of the state; the
// body follows.
func (c *a64Compiler) emitStart() {
	a := c.a
	c.startOff = a.Len()
	c.stState(arm64.RegLR, backend.OffNativeBase)
	for i := 1; i <= 5; i++ {
		c.ldState(a64Regs[i], backend.OffArgs+8*int32(i-1))
	}
	c.ldState(a64Regs[10], backend.OffStackLo)
	c.addImm(a64Regs[10], a64Regs[10], vm.StackSize)
	for _, i := range []int{0, 6, 7, 8, 9} {
		a.Emit(arm64.Mov(8, a64Regs[i], arm64.XZR))
	}
	c.ldState(a64Budget, backend.OffBudget)
	c.ldState(a64Native, backend.OffSaveArea)
	if c.checked { // no region allowed the last access yet
		c.stState(arm64.XZR, backend.OffHotReadLo+8)
		c.stState(arm64.XZR, backend.OffHotWriteLo+8)
	}
	// A tail call may continue in a program with local calls.
	c.addImm(a64Tmp, a64Regs[10], vm.StackFrameSize-vm.StackSize)
	c.stState(a64Tmp, backend.OffCallLimit)
	if c.Calls {
		a.MovConst(8, a64Tmp, uint64(c.tag))
		c.stState(a64Tmp, backend.OffProgTag)
	}
}

// Budget.

// subBudget subtracts n slots from the budget, setting the flags.
func (c *a64Compiler) subBudget(n int) { c.budgetSub(arm64.SUBS, n) }

// budgetSub subtracts n slots from the budget with op: SUBS, or SUB where
// nothing tests the result (a budget loop's copy).
func (c *a64Compiler) budgetSub(op arm64.ALUOp, n int) {
	if w, ok := arm64.ALUImm(op, 8, a64Budget, a64Budget, uint64(n)); ok {
		c.a.Emit(w)
		return
	}
	c.a.MovConst(8, a64Tmp, uint64(n))
	c.a.Emit(arm64.ALUReg(op, 8, a64Budget, a64Budget, a64Tmp))
}

// testBudget charges the block up to and including slot pc, if not done
// yet, and sets the flags from the budget (MI: overdrawn).
func (c *a64Compiler) testBudget() {
	if c.stretch.Uncharged {
		c.subBudget(c.stretch.Pending(c.pc + 1))
		c.stretch.Charged()
		return
	}
	c.emit(arm64.CmpImm(8, a64Budget, 0))
}

// checkBudget is the test of a charging instruction that leaves when the
// budget is overdrawn and, in resumable code, resumes right after it.
func (c *a64Compiler) checkBudget(pc int) {
	if c.budget.fast != nil {
		c.chargeInCopy()
		return
	}
	c.testBudget()
	pos := c.forward(must64(arm64.BCond(arm64.MI, 0)))
	back := c.a.Len()
	c.stubs = append(c.stubs, func() {
		c.here(pos)
		c.leaveBudget(pc, back, false)
	})
}

// leaveBudget leaves for an overdrawn budget at slot pc: the end of a
// slice in resumable code (Go resumes at code offset resume, or slot
// resume when slot is set), the end of the run otherwise.
func (c *a64Compiler) leaveBudget(pc, resume int, slot bool) {
	reason := uint64(backend.ReasonBudget)
	if c.resumable() {
		reason = backend.ReasonSlice
		pos := c.adr()
		c.fixups = append(c.fixups, a64Fixup{pos: int32(pos), target: int32(resume), label: !slot, adr: true})
		c.stState(a64Tmp, backend.OffResumePC)
	}
	c.leavePC(reason, pc, c.resumable())
}

// leavePC leaves with reason and pc in its upper bits (or exitPC when it
// does not fit), through leave (resume) or leaveFinal.
func (c *a64Compiler) leavePC(reason uint64, pc int, resume bool) {
	a := c.a
	if pc >= backend.PCInExitPC {
		a.MovConst(8, a64Tmp, uint64(pc))
		c.stState(a64Tmp, backend.OffExitPC)
		pc = backend.PCInExitPC
	}
	a.MovConst(8, a64Reason, reason|uint64(pc)<<8)
	target := c.leaveFinalOff
	if resume {
		target = c.leaveOff
	}
	c.branchTo(must64(arm64.B(0)), target, false)
}

// setExitPC stores pc in the state's exitPC.
func (c *a64Compiler) setExitPC(pc int) {
	c.a.MovConst(8, a64Tmp, uint64(pc))
	c.stState(a64Tmp, backend.OffExitPC)
}
