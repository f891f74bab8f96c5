package frontend

import (
	"fmt"
	"slices"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// Options select the analyses a back end wants.
type Options struct {
	// Switches: look for compare trees worth a jump table. Off when
	// constants are blinded: a table's bounds would be unblinded
	// immediates.
	Switches bool
	// Hoist: look for loops whose checks can be hoisted (checked code
	// only; not when blinding, the guard's bounds would be unblinded
	// immediates either).
	Hoist bool
	// Idioms: look for byte loops worth a wide copy (see idiom.go).
	// Not when blinding: the back end's tests would be unblinded
	// immediates.
	Idioms bool
	// Selects: look for branches that only select a value (see
	// select.go).
	Selects bool
	// LoopBudget: look for small loops whose iterations may test the
	// budget once (see loopbudget.go).
	LoopBudget bool
}

// Analysis is what a back end learns of a program before emitting it. Its
// slices are indexed by slot and valid until the next Analyze.
type Analysis struct {
	insns []asm.Instruction

	// Starts marks the first slot of each block (see Analyze).
	Starts []bool
	// BackEdges are the backward jumps, as (target, source) slots, in
	// slot order of their sources.
	BackEdges [][2]int32
	// Loops: the program has a backward jump; LoopEnd and LoopHead are
	// only filled then.
	Loops bool
	// LoopEnd[pc] is the largest slot q of a backward jump from q to a
	// target <= pc < q (0: pc is in no loop). A forward jump past it
	// leaves every loop around pc.
	LoopEnd []int32
	// LoopHead[pc]: a backward jump goes to pc.
	LoopHead []bool

	// Local: the program makes bpf-to-bpf calls. Calls: it calls helpers,
	// so tail calls may happen. Lookups: it calls an ArrayLookup helper
	// (vm.Helper), which a back end may answer inline; such a call does
	// not end a block.
	Local, Calls, Lookups bool
	// Memory: the program accesses memory (loads, stores, atomics).
	// HotUsed: some access is not through r10. Packet: it loads from the
	// packet (LD_ABS, LD_IND).
	Memory, HotUsed, Packet bool

	// LiveIn: the registers a run's start must set up (see findLiveIn).
	LiveIn uint16

	// Switches are the compare trees worth a jump table, in slot order.
	Switches []Switch

	// Hoists are the loops whose checks are hoisted (see hoist.go),
	// HoistRanges their ranges; Hoisted marks the accesses that the
	// unchecked copies of those loops do not test.
	Hoists      []Hoist
	HoistRanges []HoistRange
	Hoisted     []bool

	// Copies are the copy loops (see idiom.go), when Options.Idioms.
	Copies []CopyLoop

	// Selects are the selects (see select.go), in slot order, when
	// Options.Selects.
	Selects []Select

	// BudgetLoops are the loops run with one budget test per iteration
	// (see loopbudget.go), in the order of their heads, when
	// Options.LoopBudget.
	BudgetLoops []BudgetLoop

	live          []uint16 // findLiveIn's liveness
	dead          []uint16 // DeadAfter's, computed at its first question
	deadReady     bool
	liveWork      []int32 // solveLiveness' scratch space
	liveQueued    []bool
	livePreds     []int32
	livePredStart []int32
	condJumps     []int32 // the conditional jumps, in slot order (findBlocks)
	inSwitch      []bool  // findSwitches' scratch space
	switchSeen    []int32
	switchNodes   []int32
	switchStack   []int32
	switchData    []int32      // the Switches' Leaves and Slots
	hoistState    [][11]affine // findHoists' scratch space
	hoistReached  []bool
	hoistBack     []bool
	hoistSkip     []bool
	hoistWork     int     // slots interpreted so far (maxHoistWork)
	budgetEnd     []int32 // findBudgetLoops' scratch space
}

// Analyze analyses p, reusing a's buffers.
//
// Blocks are straight-line code with one entry: at slot 0, at jump and
// call targets, at the slots a switch table jumps to, after a loop whose
// checks are hoisted (where its unchecked copy rejoins the code), and
// after every instruction that always ends the interpreter's stretch
// (exits, gotos, calls, packet loads). A conditional jump does not end a block: its
// fall-through path continues the block (and the interpreter's stretch,
// which only a taken jump ends). A back end charges the budget the slots
// of a stretch at the charging instruction that ends it (or at the end of
// a block that falls through into a jump target), and forgets what it
// knows of registers and stack slots at the start of each block.
//
// It refuses programs with callbacks, which the JIT cannot run yet.
func (a *Analysis) Analyze(p *vm.Program, opts Options) error {
	insns := p.Instructions()
	n := len(insns)
	*a = Analysis{
		insns:     insns,
		Starts:    slices.Grow(a.Starts[:0], n)[:n],
		BackEdges: a.BackEdges[:0],
		LoopEnd:   a.LoopEnd,
		LoopHead:  a.LoopHead,
		Switches:  a.Switches[:0],

		Hoists:      a.Hoists[:0],
		HoistRanges: a.HoistRanges[:0],
		Hoisted:     a.Hoisted[:0],
		Copies:      a.Copies[:0],
		Selects:     a.Selects[:0],
		BudgetLoops: a.BudgetLoops[:0],

		live:          a.live,
		dead:          a.dead,
		liveWork:      a.liveWork,
		liveQueued:    a.liveQueued,
		livePreds:     a.livePreds,
		livePredStart: a.livePredStart,
		condJumps:     a.condJumps[:0],
		inSwitch:      a.inSwitch,
		switchSeen:    a.switchSeen,
		switchNodes:   a.switchNodes,
		switchStack:   a.switchStack,
		switchData:    a.switchData[:0],
		hoistState:    a.hoistState,
		hoistReached:  a.hoistReached,
		hoistBack:     a.hoistBack,
		hoistSkip:     a.hoistSkip,
		budgetEnd:     a.budgetEnd,
	}
	clear(a.Starts)
	if err := a.findBlocks(p); err != nil {
		return err
	}
	if opts.Switches {
		a.findSwitches()
	}
	a.findLoops()
	a.findLiveIn()
	if opts.Idioms {
		a.findIdioms()
	}
	if opts.Hoist {
		a.findHoists()
	}
	if opts.LoopBudget {
		a.findBudgetLoops() // after the switches, idioms and hoists it avoids
	}
	if opts.Selects {
		a.findSelects() // last: it needs every block start
	}
	return nil
}

// Instructions returns the instructions analysed.
func (a *Analysis) Instructions() []asm.Instruction { return a.insns }

// findBlocks fills Starts, BackEdges and what the program does.
func (a *Analysis) findBlocks(p *vm.Program) error {
	insns, starts := a.insns, a.Starts
	starts[0] = true
	for pc := 0; pc < len(insns); pc++ {
		ins := &insns[pc]
		next := pc + 1
		switch ins.Class() { // one dispatch per slot: lddw is tested inside
		case asm.ClassJMP, asm.ClassJMP32:
			switch {
			case ins.Opcode == asm.OpCall && ins.Src == asm.PseudoCall:
				a.Local = true
				starts[next+int(ins.Imm)] = true
			case ins.Opcode == asm.OpCall || ins.Opcode == asm.OpCallX:
				a.Calls = true
				if IsArrayLookup(p, ins) {
					// Answered inline, the call does not end the
					// interpreter's stretch; through the helper it does,
					// and the next stretch starts after it anyway.
					a.Lookups = true
					continue
				}
			case ins.Opcode == asm.OpExit:
			case ins.Opcode == asm.ClassJMP|asm.JmpJA, ins.Opcode == asm.ClassJMP32|asm.JmpJA:
				t := JumpTarget(pc, ins)
				starts[t] = true
				if t < next {
					a.BackEdges = append(a.BackEdges, [2]int32{int32(t), int32(pc)})
				}
			default: // conditional: the block goes on
				t := JumpTarget(pc, ins)
				starts[t] = true
				if t < next {
					a.BackEdges = append(a.BackEdges, [2]int32{int32(t), int32(pc)})
				}
				if IsConditional(ins) {
					a.condJumps = append(a.condJumps, int32(pc))
				}
				continue
			}
		case asm.ClassLD:
			if ins.Opcode == asm.OpLDDW {
				if ins.Src == asm.PseudoFunc {
					// Callbacks (bpf_loop) run through vm.Env.CallFunction,
					// which has no JIT implementation yet.
					return &vm.LoadError{Program: p.Name(), Index: pc, Err: fmt.Errorf("jit: %w: callbacks (BPF_PSEUDO_FUNC)", vm.ErrUnsupported)}
				}
				pc++
				continue
			}
			a.Packet = true // packet loads
		case asm.ClassLDX:
			a.Memory = true
			a.HotUsed = a.HotUsed || ins.Src != asm.R10
			continue
		case asm.ClassST, asm.ClassSTX:
			a.Memory = true
			a.HotUsed = a.HotUsed || ins.Dst != asm.R10
			continue
		default:
			continue
		}
		if next < len(insns) {
			starts[next] = true
		}
	}
	return nil
}

// findLoops fills LoopEnd and LoopHead from the backward jumps, in one
// sweep: a program may have hundreds of thousands of them, each spanning
// thousands of slots, so walking each one's span would be quadratic.
// Sweeping the slots in order with m the largest end of the jumps that
// start at or before slot i gives LoopEnd[i]: if m > i, the jump that ends
// there spans i and none spanning i ends later; else no jump spans i (one
// that did would end after i, so m would be larger).
func (a *Analysis) findLoops() {
	if len(a.BackEdges) == 0 {
		return
	}
	a.Loops = true
	n := len(a.insns)
	a.LoopEnd = slices.Grow(a.LoopEnd[:0], n)[:n]
	clear(a.LoopEnd)
	a.LoopHead = slices.Grow(a.LoopHead[:0], n)[:n]
	clear(a.LoopHead)
	for _, e := range a.BackEdges {
		a.LoopEnd[e[0]] = max(a.LoopEnd[e[0]], e[1])
		a.LoopHead[e[0]] = true
	}
	m := int32(0)
	for i, end := range a.LoopEnd {
		m = max(m, end)
		if m > int32(i) {
			a.LoopEnd[i] = m
		} else {
			a.LoopEnd[i] = 0
		}
	}
}

// LeavesLoop reports whether a forward jump at slot pc to target leaves
// a loop: such a jump is usually not taken.
func (a *Analysis) LeavesLoop(pc, target int) bool {
	if !a.Loops {
		return false
	}
	end := int(a.LoopEnd[pc])
	return end > pc && end < target
}

// EndsRun reports whether the code at slot pc ends the run: an exit after
// at most three instructions that cannot jump, such as the "return" inside
// a loop. A jump there runs once per run at most, so a back end may lay it
// out as not taken.
func (a *Analysis) EndsRun(pc int) bool {
	for end := min(pc+4, len(a.insns)); pc < end; pc++ {
		switch ins := &a.insns[pc]; ins.Class() {
		case asm.ClassJMP, asm.ClassJMP32:
			return ins.Opcode == asm.OpExit
		case asm.ClassLD:
			if ins.Opcode != asm.OpLDDW {
				return false // a packet load may end the run itself
			}
			pc++
		}
	}
	return false
}

// JumpTarget returns the slot a jump (not a call) at pc goes to: gotol
// has its offset in imm.
func JumpTarget(pc int, ins *asm.Instruction) int {
	if ins.Opcode == asm.ClassJMP32|asm.JmpJA {
		return pc + 1 + int(ins.Imm)
	}
	return pc + 1 + int(ins.Offset)
}

// IsConditional reports whether ins, a JMP or JMP32 class instruction, is
// a conditional jump.
func IsConditional(ins *asm.Instruction) bool {
	switch ins.Opcode & 0xf0 {
	case asm.JmpJA, asm.JmpCALL, asm.JmpEXIT, 0xe0, 0xf0:
		return false
	}
	return true
}

// IsArrayLookup reports whether ins calls one of p's ArrayLookup helpers.
func IsArrayLookup(p *vm.Program, ins *asm.Instruction) bool {
	if ins.Opcode != asm.OpCall || ins.Src != 0 {
		return false
	}
	h, ok := p.Helpers()[ins.Imm]
	return ok && h.ArrayLookup
}

// NullTest is how the null test after a lookup (the verifier makes
// programs test a lookup's result) can be answered by the lookup itself.
type NullTest uint8

const (
	NullTestNone NullTest = iota
	NullTestEQ            // if r0 == 0 goto target
	NullTestNE            // if r0 != 0 goto target
)

// NullTestAfter returns the null test of r0 at slot pc+1 that the call at
// pc can answer, with its target: a jeq or jne of r0 against 0 in the same
// block.
func (a *Analysis) NullTestAfter(pc int) (NullTest, int) {
	if pc+1 >= len(a.insns) || a.Starts[pc+1] {
		return NullTestNone, 0
	}
	ins := &a.insns[pc+1]
	if ins.Dst != asm.R0 || ins.Imm != 0 {
		return NullTestNone, 0
	}
	target := pc + 2 + int(ins.Offset)
	switch ins.Opcode {
	case asm.ClassJMP | asm.JmpJEQ | asm.SourceK:
		return NullTestEQ, target
	case asm.ClassJMP | asm.JmpJNE | asm.SourceK:
		return NullTestNE, target
	}
	return NullTestNone, 0
}
