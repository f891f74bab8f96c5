package amd64

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// features are the CPU features code generation may use.
type features struct {
	bmi2, movbe bool
}

// compiler translates one vm.Program into x86-64 code. Code layout:
//
//	enter stub    resume: load eBPF registers from the state, jump to resumePC
//	leave stubs   store them, return to the trampoline
//	shared stubs  region check (checked mode), packet abort
//	start stub    start a run: load r1-r5 and r10, clear the others
//	body          one block per eBPF slot, in order, right after start
//	slow paths    out-of-line stubs of the body (failed fast checks)
type compiler struct {
	a       *x86.Asm
	prog    *vm.Program
	insns   []asm.Instruction
	checked bool
	blind   bool
	trap    bool   // Options.trapSlowPaths
	key     uint64 // blinding key
	feat    features
	tag     uint32 // identifies this program's code at run time

	// The architecture-neutral analyses: blocks, loops, what the
	// program does, liveness, switch trees, hoisted loop checks
	// (jit/internal/frontend). With Local and Calls, helper
	// exits may happen inside a local call and need a save area; with
	// HotUsed, checked code may test the hot regions.
	frontend.Analysis

	offsets []int32 // code offset of each slot emitted so far
	jumps   []jumpFixup
	stubs   []stub
	// helperExits are the slots of helper calls through the general path.
	helperExits []int32
	// inlineLookups: the program calls an ArrayLookup helper and has
	// arrays to answer such calls with (see compile_lookup.go).
	inlineLookups bool
	tableBase     uint64            // address of the program's map table
	arrays        []engine.ArrayMap // by map table entry
	infoFixups    []int32           // rel32 fields that must point at the array table
	// lookupPatches are the jumps of inline lookups to their out-of-line
	// paths, by lookup in order (see stubLookup).
	lookupPatches []lookupPatch
	// switchPatches are what the dispatches of the Switches leave for
	// their tables (see compile_switch.go); nextSwitch is the next to
	// emit.
	switchPatches []switchPatch
	nextSwitch    int
	// hoistGuards are what the guards of the Hoists leave to patch
	// (compile_hoist.go). copying is the loop whose unchecked copy is
	// being emitted, at copyOffsets.
	hoistGuards []hoistGuard
	copying     *frontend.Hoist
	copyOffsets []int32
	// Copy loops (compile_idiom.go): idiomBodies holds the offset of each
	// one's ordinary code (0: no wide code), idiomStart that of the wide
	// code being emitted and idiomOuts its jumps to the ordinary code.
	// idioms counts the copy loops emitted (for tests).
	idiomBodies []int32
	idiomStart  int32
	idiomOuts   []int32
	idioms      int
	selects     int // selects emitted without a branch (for tests)
	// Budget loops (compile_loopbudget.go): budgetGuards are their
	// guards in the body. fast is the loop whose copy is being emitted
	// (at copyOffsets), fastIndex its index, fastGuard and fastLoop the
	// offsets of the copy's guard and of its code; noStub is the stub a
	// charge without a test hands out. budgetLoops counts the copies
	// emitted (for tests).
	budgetGuards        []budgetGuard
	fast                *frontend.BudgetLoop
	fastIndex           int
	fastGuard, fastLoop int32
	// copyCharge is the offset of the last charging instruction of the
	// copy being emitted that later charges may add to, -1 for none
	// (addToCopyCharge).
	copyCharge  int
	noStub      stub
	budgetLoops int
	hashUpdates int               // calls answered by inline hash updates (compile_hash.go)
	tr          frontend.Tracking // see compile_track.go
	// pc is the slot being emitted, stretch the budget stretch it is in:
	// its length is subtracted from the budget register at the charging
	// instruction that ends it, whose sign test the subtraction then is.
	pc      int
	stretch frontend.Stretch
	// flatLeave: every exit of the body is at depth 0, where the stack
	// pointer is already the native stack's base: leaving is returning
	// (see jmpLeave). The shared stubs leave through leaveFinal.
	flatLeave bool
	// magic caches the reciprocals of divMagic, which cost divisions to
	// find, and their code; they depend on nothing but the divisor (and
	// the code on its key) and are kept across compiles, behind a pointer
	// so that resetting the compiler does not copy them.
	magic *[16]magicEntry
	// memUsed marks the variants of checked accesses the body used;
	// memShared holds the offsets of their shared slow paths.
	memUsed   uint16
	memShared [16]int32

	// flatSliceOff is the offset of emitFlatSlice's code, 0 until it is
	// emitted.
	flatSliceOff int
	// directLeaveOff, when not 0, is the offset of emitDirectLeave's
	// code, where flat code's leaves go instead of returning, and
	// directLeaveJump that of the rel32 of its jump to the direct
	// entry's fallback (Code.DirectLeave).
	directLeaveOff, directLeaveJump int
	// Offsets of the shared stubs.
	enterOff, startOff, leaveOff, leaveFinalOff, bodyOff, bodyEnd int
	// directRoomOff, when not 0, is where the room for a direct entry
	// starts: it ends at the body (emitDirectRoom). direct is what the
	// entry will be made with.
	directRoomOff                            int
	direct                                   backend.Direct
	slice                                    int64
	regionCheckOff, regionProbeOff, abortOff int

	// out is what Compile returns, done its Release (c.release).
	out  backend.Code
	done func()
}

// jumpFixup is a rel32 field that must point at a slot's code.
type jumpFixup struct {
	pos    int32
	target int32
	body   bool // to a compare loop's wide code (compareEdge)
}

type stubKind uint8

const (
	stubMemCheck stubKind = iota
	stubBudget
	stubBudgetCond
	stubCallDepth
	stubMisaligned
	stubReturn
	stubKeyCheck
	stubEdge
	stubLookup
	stubDivZero
	stubDivMinusOne
	stubSwitchRefund
	stubHoistProbe
	stubIdiomProbe
	stubSelect
)

// stub is an out-of-line path, emitted after the body: the rel32 at patch
// jumps to it.
type stub struct {
	kind  stubKind
	patch int32
	pc    int32
	base  x86.Reg
	off   int32
	// size: for stubMemCheck the variant (memVariant); for
	// stubBudgetCond, off and size locate the comparison's bytes in the
	// body (size 0: none, the jump goes to the next slot).
	size   uint8
	write  bool
	resume int32 // code offset to continue at
	helper int32 // stubKeyCheck: code offset of the helper exit
	// stubEdge: the taken path of a conditional jump that charges the
	// budget n slots and goes to slot target. stubLookup: see
	// emitLookupStub. stubBudget: a slice that runs out resumes at slot
	// target-1 (0: right after the test).
	target, n int32
	fused     frontend.NullTest
	// cost: stubLookup, the slots of the stretch up to the call.
	cost int32
}

// compilers recycles compilers and their buffers: compiling allocates
// nothing in the steady state.
var compilers = sync.Pool{New: func() any { return &compiler{a: x86.NewAsm(4096)} }}

func newCompiler(p *vm.Program, opts *backend.Options, feat features, key uint64, tag uint32) *compiler {
	insns := p.Instructions()
	c := compilers.Get().(*compiler)
	*c = compiler{
		a:       c.a,
		prog:    p,
		insns:   insns,
		checked: opts.Checked,
		trap:    opts.TrapSlowPaths,
		direct:  backend.Direct{Budget: opts.DirectBudget, MinContext: opts.DirectMinContext},
		slice:   opts.DirectSlice,
		blind:   opts.Blind,
		key:     key,
		feat:    feat,
		tag:     tag,

		Analysis: c.Analysis, // reset by Analyze, which reuses its buffers
		offsets:  slices.Grow(c.offsets[:0], len(insns))[:len(insns)],
		jumps:    c.jumps[:0],
		stubs:    c.stubs[:0],

		helperExits:   c.helperExits[:0],
		lookupPatches: c.lookupPatches[:0],
		switchPatches: c.switchPatches,
		infoFixups:    c.infoFixups[:0],
		magic:         c.magic,
		done:          c.done,

		hoistGuards: c.hoistGuards,
		copyOffsets: c.copyOffsets,
		idiomOuts:   c.idiomOuts[:0],
		idiomBodies: c.idiomBodies,

		budgetGuards: c.budgetGuards,
	}
	if c.done == nil {
		c.done = c.release // made once: Compile hands it out as Code.Release
		c.magic = new([16]magicEntry)
	}
	c.a.Reset()
	return c
}

// release returns c to the pool; the code it returned must not be used
// afterwards.
func (c *compiler) release() {
	c.prog, c.insns = nil, nil
	compilers.Put(c)
}

// compile emits the whole program and returns its code.
func (c *compiler) compile() ([]byte, error) {
	if err := c.analyze(); err != nil {
		return nil, err
	}
	c.prepareLookups()
	c.emitShared()
	c.flatLeave = c.flat()
	if c.resumable() && c.mayBeDirect() {
		c.emitDirectLeave()
	}
	c.emitStart()
	c.bodyOff = c.a.Len()
	if err := c.emitSlots(0, len(c.insns), c.offsets); err != nil {
		return nil, err
	}
	c.bodyEnd = c.a.Len()
	c.a.Ud2() // unreachable: validation forbids falling off the end
	if err := c.emitLoopCopies(); err != nil {
		return nil, err
	}
	if err := c.emitBudgetCopies(); err != nil {
		return nil, err
	}
	c.emitCompareLoops()
	c.emitMemSlowPaths()
	for i := range c.stubs {
		c.emitStub(&c.stubs[i])
	}
	c.emitArrayInfo()
	c.emitSwitchTables()
	for _, j := range c.jumps {
		off := int(c.offsets[j.target])
		if j.body {
			off = int(c.idiomBodies[c.IdiomAt(int(j.target))])
		}
		c.a.PatchRel32(int(j.pos), off)
	}
	return c.a.Bytes(), nil
}

// emitSlots emits the code of slots [from, to), recording their offsets
// in offsets: the body, or the copy of a loop.
func (c *compiler) emitSlots(from, to int, offsets []int32) error {
	insns, starts := c.insns, c.Starts[:len(c.insns)]
	for pc := from; pc < to; pc++ {
		head := int32(-1) // the offset of a budget loop's head: its guard
		if starts[pc] {
			// The last block may fall through into this one without a
			// charging instruction.
			if c.fast == nil || !c.mergesInCopy(pc) {
				if c.stretch.Start < pc {
					c.charge(pc)
				}
				c.stretch.Begin(pc)
				c.copyCharge = -1
			}
			c.resetTracking()
			if c.Loops && c.LoopHead[pc] && len(c.BudgetLoops) > 0 {
				head = c.budgetHead(pc)
			}
			if c.Loops && c.LoopHead[pc] && head < 0 {
				idiom := c.emitIdiom(pc)
				if i := c.hoistAt(pc); i >= 0 && c.copying == nil {
					c.enterHoisted(i)
				}
				c.alignLoopHead()
				if idiom {
					c.idiomBodies[c.IdiomAt(pc)] = int32(c.a.Len())
				}
			}
		}
		c.pc = pc
		offsets[pc] = int32(c.a.Len())
		if head > 0 {
			offsets[pc] = head
		}
		if c.copying == nil && c.idiomStart != 0 {
			// Jumps from outside and resumed slices run the wide code.
			offsets[pc], c.idiomStart = c.idiomStart, 0
		}
		if c.trap {
			c.emitLoopTrap(pc)
		}
		// The dispatch is here rather than in a function of its own:
		// a call per instruction is measurable.
		ins := &insns[pc]
		var err error
		lddw := false
		switch ins.Class() {
		case asm.ClassALU, asm.ClassALU64:
			if ins.Opcode == asm.ClassALU64|asm.AluMOV|asm.SourceX && c.emitLeaPair(pc, ins) {
				c.trackALU(ins)
				c.trackALU(&insns[pc+1])
				pc++
				offsets[pc] = int32(c.a.Len())
				continue
			}
			// The opcode test is emitFoldedAccess' own first one, here
			// to spare the other ALU slots a call.
			if ins.Opcode == asm.ClassALU64|asm.AluADD|asm.SourceK && c.emitFoldedAccess(pc, ins) {
				pc++
				offsets[pc] = offsets[pc-1]
				continue
			}
			if isMovImm(ins) && c.movBeforeZeroOne(pc) {
				c.resetTracking() // the register's old value is gone
				break
			}
			err = c.emitALU(ins)
			if c.needsTrackALU(ins) {
				c.trackALU(ins)
			}
		case asm.ClassJMP, asm.ClassJMP32:
			if sw := c.Switches; c.nextSwitch < len(sw) && sw[c.nextSwitch].Root == int32(pc) {
				c.emitSwitch(c.nextSwitch)
				c.nextSwitch++
			}
			if len(c.Selects) > 0 {
				if sel, ok := c.SelectAt(pc); ok {
					c.emitSelect(pc, sel, offsets)
					if pc++; sel.Goto {
						pc++
						c.copyCharge = -1
					}
					c.stretch.Next(pc)
					continue
				}
			}
			var fused bool
			fused, err = c.emitJump(pc, ins)
			c.copyCharge = -1
			if fused {
				// An inline lookup answered the null test of its result
				// that follows it too (see emitArrayLookup).
				c.resetTracking()
				pc++
				offsets[pc] = int32(c.a.Len())
				c.stretch.Next(pc)
				continue
			}
			if op := ins.Opcode & 0xf0; op == asm.JmpCALL || op == asm.JmpEXIT {
				c.resetTracking()
			}
		case asm.ClassLDX:
			c.emitLoad(pc, ins, int32(ins.Offset))
		case asm.ClassST, asm.ClassSTX:
			if ins.Opcode&0xe0 == asm.ModeATOMIC {
				err = c.emitAtomic(pc, ins)
				c.resetTracking()
			} else {
				c.emitStore(pc, ins, int32(ins.Offset))
			}
		case asm.ClassLD:
			if ins.Opcode == asm.OpLDDW {
				c.emitConst(regMap[ins.Dst], backend.Constant(c.prog, pc))
				c.trackLDDW(pc, ins.Dst)
				lddw = true
			} else {
				c.emitPacketLoad(pc, ins)
				c.resetTracking()
			}
		default:
			err = fmt.Errorf("%w %#02x", vm.ErrUnknownOpcode, ins.Opcode)
		}
		if err != nil {
			return &vm.LoadError{Program: c.prog.Name(), Index: pc, Err: fmt.Errorf("jit: %w", err)}
		}
		if lddw { // its second slot is never a jump target: validation refuses those
			offsets[pc+1] = offsets[pc]
			pc++
		}
		c.stretch.Next(pc)
	}
	return nil
}

// shared is the code at the start of every program of one kind (checked
// or not, with inline lookups or not): the enter, leave, region check and
// abort stubs, which depend on nothing else. It is emitted once per kind
// and copied afterwards; being at offset 0 with only internal relative
// jumps, the copy is the same code.
type shared struct {
	code                                     []byte
	enterOff, leaveOff, leaveFinalOff        int
	regionCheckOff, regionProbeOff, abortOff int
}

var sharedCode [4]atomic.Pointer[shared]

// emitShared emits the shared stubs at the start of the code.
func (c *compiler) emitShared() {
	kind := 0
	if c.checked {
		kind |= 1
	}
	if c.inlineLookups {
		kind |= 2
	}
	if s := sharedCode[kind].Load(); s != nil {
		c.a.Append(s.code)
		c.enterOff, c.leaveOff, c.leaveFinalOff = s.enterOff, s.leaveOff, s.leaveFinalOff
		c.regionCheckOff, c.regionProbeOff, c.abortOff = s.regionCheckOff, s.regionProbeOff, s.abortOff
		return
	}
	c.emitEnter()
	c.emitLeave()
	if c.checked {
		c.regionCheckOff = c.emitRegionCheck(false)
		c.regionProbeOff = c.emitRegionCheck(true)
	}
	c.emitAbort()
	sharedCode[kind].Store(&shared{
		code:     slices.Clone(c.a.Bytes()),
		enterOff: c.enterOff, leaveOff: c.leaveOff, leaveFinalOff: c.leaveFinalOff,
		regionCheckOff: c.regionCheckOff, regionProbeOff: c.regionProbeOff, abortOff: c.abortOff,
	})
}

// flat reports whether the code never leaves from below the native stack's
// base: it makes no local call (no return addresses), no helper call and
// no inline lookup (no exits that copy the native stack), no checked
// access (no calls to the region check) and no packet load (whose failure
// ends the run through the shared stubs). runFramePlain does not record
// that base for it (see setRunPath).
func (c *compiler) flat() bool {
	return !c.Local && !c.Calls && !c.Packet && !(c.checked && c.Memory)
}

// analyze runs the front end's analyses and sizes what their emission
// patches.
func (c *compiler) analyze() error {
	opts := frontend.Options{Switches: !c.blind, Hoist: c.checked && !c.blind, Idioms: !c.blind, Selects: !c.blind, LoopBudget: loopBudgets}
	if err := c.Analyze(c.prog, opts); err != nil {
		return err
	}
	c.switchPatches = slices.Grow(c.switchPatches[:0], len(c.Switches))[:len(c.Switches)]
	clear(c.switchPatches)
	c.hoistGuards = slices.Grow(c.hoistGuards[:0], len(c.Hoists))[:len(c.Hoists)]
	clear(c.hoistGuards)
	c.idiomBodies = slices.Grow(c.idiomBodies[:0], len(c.Copies))[:len(c.Copies)]
	clear(c.idiomBodies)
	c.budgetGuards = slices.Grow(c.budgetGuards[:0], len(c.BudgetLoops))[:len(c.BudgetLoops)]
	return nil
}

// alignLoopHead starts the code of a loop head on a 64-byte boundary, so
// that each iteration fetches the loop from as few 64-byte blocks as
// possible. Measured against 16 and 32 (interleaved A/B, benchmark set):
// a byte copy whose 38-byte loop fits one block runs twice as fast (the
// same loop is as slow when it straddles two), strcmp 27 % and switch 11 %
// faster, log2_int ~6 % slower, the others equal. Code that falls into a
// head runs its padding (up to 63 bytes of NOPs, which prime's inner loop
// runs every iteration): giving such heads only a 16-byte boundary changed
// nothing on prime and lost strcmp's gain, whose loop moved with the
// padding; alignment beyond that is luck until blocks are laid out by
// how hot they are.
func (c *compiler) alignLoopHead() {
	c.a.Align(64)
}

// checkBudget emits the test of a charging instruction at slot pc: leave
// with backend.ReasonBudget if the budget is overdrawn.
func (c *compiler) checkBudget(pc int) {
	c.budgetStub(stubBudget, pc)
}

// chargeSeq is "sub budget, imm8; js rel32", the usual charge of a block
// and its test, emitted as one copy with the imm8 (at chargeImm) patched.
var chargeSeq = x86.NewSeq(func(a *x86.Asm) {
	a.ALURI(x86.SUB, 8, budgetReg, 0x7f)
	a.Jcc(x86.CondS)
})

const chargeImm = 3

// budgetStub tests the budget at the charging instruction at slot pc,
// charging the block first if not done yet, and jumps to a new stub of
// kind when it is overdrawn.
func (c *compiler) budgetStub(kind stubKind, pc int) *stub {
	if c.fast != nil {
		return c.chargeInCopy()
	}
	if n := c.pc + 1 - c.stretch.Start; c.stretch.Uncharged && n <= 0x7f {
		start := c.a.EmitSeq(&chargeSeq)
		c.a.Bytes()[start+chargeImm] = byte(n)
		c.stretch.Charged()
		return c.addStub(c.a.Len()-4, kind, pc)
	}
	c.testBudget()
	return c.toStub(x86.CondS, kind, pc)
}

// testBudget charges the block's length, if not done yet, and sets the
// sign flag from the budget register: the subtraction does both.
func (c *compiler) testBudget() {
	if !c.charge(c.pc + 1) {
		c.a.TestRR(8, budgetReg, budgetReg)
	}
}

// charge subtracts the slots of the current block before slot end from
// the budget register, unless done already, and reports whether it did.
func (c *compiler) charge(end int) bool {
	if !c.stretch.Uncharged {
		return false
	}
	n := int32(c.stretch.Pending(end))
	c.stretch.Charged()
	if c.fast != nil && c.addToCopyCharge(n) {
		return false // the flags are not the budget's
	}
	start := c.a.Len()
	c.a.ALURI(x86.SUB, 8, budgetReg, n)
	c.noteCopyCharge(start)
	return true
}

// align pads with int3 to a 16-byte boundary.
func (c *compiler) align() {
	for c.a.Len()%16 != 0 {
		c.a.Int3()
	}
}

// jumpToSlot emits a jump (cond, or unconditional when always) to slot
// target, in its short form when the target is already emitted.
func (c *compiler) jumpToSlot(cond x86.Cond, always bool, target int) {
	if c.fast != nil {
		c.jumpInCopy(cond, always, target)
		return
	}
	offsets, emitted := c.offsets, target <= c.pc
	if len(c.Copies) > 0 && c.copying == nil && c.compareEdge(target) {
		// A compare loop's own edge goes to its wide code, out of line.
		var pos int
		if always {
			pos = c.a.Jmp()
		} else {
			pos = c.a.Jcc(cond)
		}
		c.jumps = append(c.jumps, jumpFixup{pos: int32(pos), target: int32(target), body: true})
		return
	}
	if off, ok := c.idiomTarget(target, emitted); ok {
		if always {
			c.a.JmpTo(int(off))
		} else {
			c.a.JccTo(cond, int(off))
		}
		return
	}
	if l := c.copying; l != nil {
		if target >= int(l.Head) && target <= int(l.End) {
			offsets = c.copyOffsets
		} else {
			emitted = true // the body's code
		}
	}
	if emitted {
		off := offsets[target]
		if always {
			c.a.JmpTo(int(off))
		} else {
			c.a.JccTo(cond, int(off))
		}
		return
	}
	var pos int
	if always {
		pos = c.a.Jmp()
	} else {
		pos = c.a.Jcc(cond)
	}
	c.jumps = append(c.jumps, jumpFixup{pos: int32(pos), target: int32(target)})
}

// toStub emits a conditional jump to a new out-of-line stub and returns
// the stub for the caller to complete. The stub is built in place: a stub
// passed by value is copied field by field, which costs more than it
// looks on this path.
func (c *compiler) toStub(cond x86.Cond, kind stubKind, pc int) *stub {
	return c.addStub(c.a.Jcc(cond), kind, pc)
}

// addStub adds a stub that the rel32 at patch must jump to.
func (c *compiler) addStub(patch int, kind stubKind, pc int) *stub {
	if len(c.stubs) == cap(c.stubs) {
		c.stubs = slices.Grow(c.stubs, 1)
	}
	c.stubs = c.stubs[:len(c.stubs)+1]
	s := &c.stubs[len(c.stubs)-1]
	*s = stub{kind: kind, patch: int32(patch), pc: int32(pc)}
	return s
}

// emitConst loads a 64-bit constant, blinded when asked.
func (c *compiler) emitConst(dst x86.Reg, v uint64) {
	if !c.blind || v == 0 {
		c.a.MovRI(dst, v)
		return
	}
	c.a.MovRI64(dst, v^c.key)
	c.a.MovRI64(tmpAddr, c.key)
	c.a.ALURR(x86.XOR, 8, dst, tmpAddr)
}

// blindImm loads imm, sign-extended to 64 bits, into r without the
// program's constant appearing in the code.
func (c *compiler) blindImm(r x86.Reg, imm int32) {
	k := int32(c.key)
	c.a.MovRISX(r, imm^k)
	c.a.ALURI(x86.XOR, 8, r, k)
}
