package verifier

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// DefaultMaxInstructions is the default complexity limit: how many
// instructions the verifier may process over all paths, as Linux's
// BPF_COMPLEXITY_LIMIT_INSNS.
const DefaultMaxInstructions = 1_000_000

// DefaultMaxLoopIterations is the default bound on the iterations of a
// widened loop per entry: any loop counted by a 32-bit number passes,
// one that needs a 64-bit counter's range does not. The run's
// instruction budget bounds the time a run takes either way.
const DefaultMaxLoopIterations = 1 << 32

// Options describe the environment a program runs in.
type Options struct {
	// ContextSize is the number of bytes readable at r1 when the program
	// starts.
	ContextSize int
	// ContextReadOnly refuses stores into the context.
	ContextReadOnly bool
	// ContextLengthInR2 tells the verifier that r2 holds ContextSize at
	// entry, as vm.Program.Run does. Otherwise r2..r5 are uninitialised,
	// as in the kernel.
	ContextLengthInR2 bool
	// AllowPointerLeaks lets the program turn pointers into numbers: return
	// them, store them into maps or the context, compare them, do
	// arithmetic the verifier cannot follow. Memory safety is kept either
	// way.
	AllowPointerLeaks bool
	// MaxInstructions is the complexity limit (DefaultMaxInstructions if 0).
	MaxInstructions int
	// MaxLoopIterations bounds how many times a loop proved with an
	// invariant (widened) may run per entry (per widening of the entry,
	// which is widened a few times at most), from its counter's range and
	// step (DefaultMaxLoopIterations if 0). A loop that terminates only
	// after 2^64 iterations is refused.
	MaxLoopIterations int
	// LoopsBoundedByBudget accepts loops proved memory-safe with an
	// invariant whose termination the verifier cannot prove: no counter
	// moves towards an exit on every iteration, or it may take more than
	// MaxLoopIterations iterations. Only the run's instruction budget ends
	// such a loop, so a run may fail with vm.ErrBudgetExceeded; memory
	// safety is proved as for any other program. Result.LoopsUnproven
	// counts them. Loops that return to the same state (certainly
	// infinite) are refused either way.
	LoopsBoundedByBudget bool
	// Log, if set, receives a kernel-style log: every instruction processed
	// with the register state.
	Log io.Writer
	// LineInfo, if set, returns the source line of an instruction slot,
	// for error messages.
	LineInfo func(pc int) string
}

// Result describes a verification that succeeded. It is also the proof
// that the program is safe: jit.Options.Verified takes it to compile the
// program without run-time memory checks. A Result made any other way
// proves nothing (Program returns nil).
type Result struct {
	// ContextSize is the context size the program was proved safe for
	// (Options.ContextSize): runs need a context at least that long.
	ContextSize int
	// InstructionsProcessed counts instructions over all explored paths,
	// in every pass (an exact one, and one with loop invariants if needed).
	InstructionsProcessed int
	// StatesStored counts the states kept at pruning points.
	StatesStored int
	// MaxCallDepth is the deepest bpf-to-bpf call chain, in frames.
	MaxCallDepth int
	// LoopsWidened counts the widenings of loop heads (loops.go); 0 when
	// every loop was explored iteration by iteration.
	LoopsWidened int
	// LoopsUnproven counts the widenings of loops accepted without a
	// termination proof (Options.LoopsBoundedByBudget).
	LoopsUnproven int

	prog *vm.Program
}

// Program returns the program the verifier proved safe, or nil for a
// Result that Verify did not return.
func (r *Result) Program() *vm.Program {
	if r == nil {
		return nil
	}
	return r.prog
}

// mapInfo is what the verifier needs to know about one of the program's maps.
type mapInfo struct {
	keySize, valueSize int64
	maxEntries         uint64
	typ                maps.Type
	typed              bool // typ is known
	readOnly           bool
	direct             []byte // memory of a directly addressable map
	hasDirect          bool
	known              bool // sizes are known
}

type sized interface {
	KeySize() uint32
	ValueSize() uint32
}

func newMapInfo(m vm.Map) mapInfo {
	var mi mapInfo
	if s, ok := m.(sized); ok {
		mi.keySize, mi.valueSize, mi.known = int64(s.KeySize()), int64(s.ValueSize()), true
	}
	if e, ok := m.(interface{ MaxEntries() uint32 }); ok {
		mi.maxEntries = uint64(e.MaxEntries())
	}
	if t, ok := m.(interface{ Type() maps.Type }); ok {
		mi.typ, mi.typed = t.Type(), true
	}
	if r, ok := m.(interface{ ReadOnlyProg() bool }); ok {
		mi.readOnly = r.ReadOnlyProg()
	}
	if d, ok := m.(vm.DirectMemory); ok {
		mi.direct, mi.hasDirect = d.Memory(), true
		if d.Flags()&flagReadOnlyProg != 0 {
			mi.readOnly = true
		}
	}
	return mi
}

const flagReadOnlyProg = 0x80

// visit is a state stored at a pruning point. branches counts the paths
// from it that are still being explored: when it drops to 0, every path
// from the state reached an exit, and a later state it subsumes can be
// pruned.
type visit struct {
	st       *state
	parent   *visit
	branches int
	hash     uint64 // stateHash(st)
	hits     int    // later states it pruned
	misses   int    // later states it did not
	// reentry is set on the state at a callback's entry when the helper
	// calls it again: the number of frames, callback's included.
	reentry int
	pc      int
	// At loop heads: the previous arrival on the path since it entered
	// the loop, how many arrivals this is, the widening this state is
	// (if it is one) and the latest widening of the loop on the path.
	loopPrev *visit
	loopN    int
	wid      *widening
	loopW    *widening
}

// pending is a path waiting to be explored.
type pending struct {
	st      *state
	pc      int
	parent  *visit
	reentry bool // a callback called again (checkCallbackExit)
}

type verifier struct {
	prog      *vm.Program
	insns     []asm.Instruction
	opts      Options
	maps      []mapInfo
	limit     int
	prunePt   []bool
	funcOf    []int    // the function (index in start order) of each slot
	live, rel []uint16 // registers live / whose value matters, per slot (liveness.go)
	visits    [][]*visit
	work      []pending
	processed int
	stored    int
	maxDepth  int
	nextID    uint32
	arena     *arena

	// the path being explored
	st      *state
	pc      int
	cur     *visit
	reentry bool

	// loops (loops.go): natural loops, the loop headed at each slot (or
	// -1; nil when no jump goes backwards), the widening thresholds.
	loops      []*loop
	loopOf     []int32
	uthr       []uint64
	sthr       []int64
	widen      bool // this pass widens loops
	abortEarly bool // this pass gives up on long loops (errWiden)
	widenings  []*widening
	widenedNow *widening
	widened    int
	unproven   int // widenings accepted without a termination proof
	maxIter    uint64
	loopErr    error // why the widening pass could not prove a loop
	total      int   // instructions processed by earlier passes
}

// Verify proves that p is safe to run in the environment opts describes,
// or returns a *Error saying why it cannot.
//
// Loops are first explored iteration by iteration. When that pauses (a
// loop head reached exactIterations times on one path) or gives up (the
// complexity limit), the program is verified again with loop invariants
// (loops.go); if that fails too after a pause, the exact exploration
// resumes where it paused, so that widening never refuses a program the
// exact exploration accepts.
func Verify(p *vm.Program, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	v := &verifier{prog: p, insns: p.Instructions(), opts: *opts, limit: opts.MaxInstructions, arena: arenas.Get().(*arena)}
	// Nothing of the arena outlives the call, whichever pass ends it.
	defer func() {
		v.arena.reset(v.visits, v.work)
		arenas.Put(v.arena)
	}()
	if v.limit <= 0 {
		v.limit = DefaultMaxInstructions
	}
	v.maxIter = uint64(opts.MaxLoopIterations)
	if v.maxIter == 0 {
		v.maxIter = DefaultMaxLoopIterations
	}
	for _, m := range p.Maps() {
		v.maps = append(v.maps, newMapInfo(m))
	}
	if err := v.checkCFG(); err != nil {
		return nil, err
	}
	v.liveness()
	v.findLoops()
	err := v.run(false, v.loopOf != nil)
	if v.loopOf != nil && (err == errWiden || errors.Is(err, ErrTooComplex)) {
		paused := err == errWiden
		exact := *v // the paused exploration
		v.thresholds()
		v.logf("widening loops: verifying again with loop invariants\n")
		werr := v.run(true, false)
		if werr == nil {
			err = nil
		} else {
			if paused {
				v.logf("widening failed: %v\nresuming the exploration without widening\n", werr)
				widening, loopErr := v.processed, v.loopErr
				*v = exact
				v.total += widening - v.processed
				v.loopErr = loopErr
				v.abortEarly = false
				err = v.resume()
			}
			if errors.Is(err, ErrTooComplex) {
				if v.loopErr != nil {
					err = v.loopErr
				} else if errors.Is(werr, ErrInfiniteLoop) {
					err = werr
				} else if e, ok := err.(*Error); ok {
					e.Detail += "; with loop invariants: " + firstLine(werr.Error())
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	v.logf("processed %d insns, stored %d states, max call depth %d, %d loops widened\n", v.total, v.stored, v.maxDepth, v.widened)
	return &Result{prog: p, ContextSize: opts.ContextSize, InstructionsProcessed: v.total, StatesStored: v.stored, MaxCallDepth: v.maxDepth, LoopsWidened: v.widened, LoopsUnproven: v.unproven}, nil
}

// errWiden stops the exact pass when a loop runs long: widening may do
// better.
var errWiden = errors.New("loop runs long: widen")

// run explores the program once.
func (v *verifier) run(widen, abortEarly bool) error {
	v.widen, v.abortEarly = widen, abortEarly
	v.visits = v.arena.takeLists(len(v.insns))
	v.work = v.arena.takeWork()
	v.processed, v.stored, v.nextID = 0, 0, 0
	v.widenings, v.widened, v.unproven = nil, 0, 0
	err := v.explore()
	v.total += v.processed
	return err
}

func (v *verifier) logf(format string, args ...any) {
	if v.opts.Log != nil {
		fmt.Fprintf(v.opts.Log, format, args...)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (v *verifier) initialState() *state {
	b := v.arena.newState()
	f := &b.f
	*f = frame{callsite: -1, stack: f.stack[:0], cbRefs: f.cbRefs[:0]}
	f.regs[asm.R1] = reg{typ: ptrCtx, off: constScalar(0)}
	if v.opts.ContextLengthInR2 {
		f.regs[asm.R2] = scalarReg(constScalar(uint64(v.opts.ContextSize)))
	}
	f.regs[asm.R10] = reg{typ: ptrStack, off: constScalar(0), mapIdx: 0}
	s := &b.st
	b.frames[0] = f
	s.frames, s.refs, s.tags, s.rels = b.frames[:], s.refs[:0], s.tags[:0], s.rels[:0]
	return s
}

// explore runs every path of the program depth first.
func (v *verifier) explore() error {
	v.work = append(v.work, pending{st: v.initialState(), pc: 0})
	v.maxDepth = max(v.maxDepth, 1)
	return v.drain()
}

// resume continues an exploration stopped by errWiden: the path it
// stopped on (at a checkpoint, before it changed anything), then the
// queued ones.
func (v *verifier) resume() error {
	v.processed-- // path counts the instruction again
	err := v.path()
	if err == nil {
		err = v.drain()
	}
	v.total += v.processed
	return err
}

// drain explores the queued paths.
func (v *verifier) drain() error {
	for len(v.work) > 0 {
		p := v.work[len(v.work)-1]
		v.work = v.work[:len(v.work)-1]
		v.st, v.pc, v.cur, v.reentry = p.st, p.pc, p.parent, p.reentry
		if v.opts.Log != nil {
			fmt.Fprintf(v.opts.Log, "from path at %d: %s\n", v.pc, v.st)
		}
		if err := v.path(); err != nil {
			return err
		}
	}
	return nil
}

// path explores the current path until it ends or is pruned.
func (v *verifier) path() error {
	for {
		v.processed++
		if v.processed > v.limit {
			return v.fail(ErrTooComplex, "more than %d instructions processed (the complexity limit); bound loops with constants or simplify the program", v.limit)
		}
		if v.prunePt[v.pc] {
			pruned, err := v.checkpoint()
			if err != nil {
				return err
			}
			if pruned {
				if v.opts.Log != nil {
					fmt.Fprintf(v.opts.Log, "%d: safe (pruned)\n", v.pc)
				}
				v.endPath()
				return nil
			}
		}
		if v.opts.Log != nil {
			fmt.Fprintf(v.opts.Log, "%d: %s\t; %s\n", v.pc, asm.Format(v.insns, v.pc), v.st)
		}
		ins := v.insns[v.pc]
		tagging := len(v.st.tags) > 0
		// Without relations, only a move of a register makes one.
		c := ins.Class()
		relating := len(v.st.rels) > 0 ||
			((c == asm.ClassALU || c == asm.ClassALU64) && ins.Opcode&0xf0 == asm.AluMOV && ins.Opcode&asm.SourceX != 0)
		var pre stepInfo
		if tagging || relating {
			pre = v.preStep(ins)
		}
		queued := len(v.work)
		next, done, err := v.step()
		if err != nil {
			return err
		}
		if tagging || relating {
			update := func(st *state) {
				if tagging {
					retag(st, ins, &pre)
				}
				if relating {
					rerel(st, ins, &pre)
				}
			}
			update(v.st)
			for i := queued; i < len(v.work); i++ {
				if v.work[i].st != v.st {
					update(v.work[i].st)
				}
			}
		}
		if done {
			v.endPath()
			return nil
		}
		v.pc = next
	}
}

// stepInfo is what retag and rerel need from before an instruction ran.
type stepInfo struct {
	depth int    // frames
	dst   scalar // the destination's number, if dstOK
	dstOK bool
	// The source register of an ALU instruction, if it held a constant.
	srcConst bool
	src      uint64
}

func (v *verifier) preStep(ins asm.Instruction) stepInfo {
	ri := stepInfo{depth: len(v.st.frames)}
	f := v.st.cur()
	if d := &f.regs[ins.Dst&15]; d.typ == scalarValue {
		ri.dst, ri.dstOK = d.off, true
	}
	if (ins.Class() == asm.ClassALU || ins.Class() == asm.ClassALU64) && ins.Opcode&asm.SourceX != 0 {
		if r := &f.regs[ins.Src&15]; r.typ == scalarValue && r.off.isConst() {
			ri.srcConst, ri.src = true, r.off.value()
		}
	}
	return ri
}

// writes returns the registers of the current frame a non-ALU
// instruction writes, or exit: it returns from the frame (which goes,
// and the caller's r0-r5 are written).
func writes(ins asm.Instruction) (regs uint16, exit bool) {
	dst := uint16(1) << (ins.Dst & 15)
	switch ins.Class() {
	case asm.ClassLDX:
		return dst, false
	case asm.ClassLD:
		if ins.IsLDDW() {
			return dst, false
		}
		return regsR0R5, false
	case asm.ClassST, asm.ClassSTX:
		if ins.Opcode&0xe0 == asm.ModeATOMIC {
			return 1 | 1<<(ins.Src&15), false
		}
		return 0, false
	}
	switch ins.Opcode {
	case asm.OpCall, asm.OpCallX:
		return regsR0R5, false
	case asm.OpExit:
		return 0, true
	}
	return 0, false
}

// finish ends the current path: its checkpoints lose a live branch.
func (v *verifier) finish() {
	for x := v.cur; x != nil; x = x.parent {
		x.branches--
		if x.branches > 0 {
			break
		}
	}
}

// endPath ends the current path, whose state nothing else references:
// a pruning point stores a copy, a queued path its own state.
func (v *verifier) endPath() {
	v.finish()
	v.arena.release(v.st)
	v.st = nil
}

// branch queues st to be explored from pc, as a sibling of the current path.
func (v *verifier) branch(st *state, pc int) {
	if v.cur != nil {
		v.cur.branches++
	}
	v.work = append(v.work, pending{st: st, pc: pc, parent: v.cur})
}

func (v *verifier) newID() uint32 {
	v.nextID++
	return v.nextID
}

// fail builds the error for the current instruction.
func (v *verifier) fail(rule error, format string, args ...any) error {
	e := &Error{PC: v.pc, Err: rule, Detail: fmt.Sprintf(format, args...)}
	if v.pc >= 0 && v.pc < len(v.insns) {
		e.Insn = asm.Format(v.insns, v.pc)
		if v.opts.LineInfo != nil {
			e.Line = v.opts.LineInfo(v.pc)
		}
	}
	if v.st != nil {
		e.State = v.st.String()
	}
	if v.opts.Log != nil {
		fmt.Fprintln(v.opts.Log, e.Error())
	}
	return e
}

// readReg returns register r of the current frame, which must be
// initialised.
func (v *verifier) readReg(r uint8) (*reg, error) {
	x := &v.st.cur().regs[r]
	if x.typ == notInit {
		return nil, v.fail(ErrUninitialized, "R%d is read before it is written", r)
	}
	return x, nil
}

// step checks the instruction at v.pc and applies it to v.st. It returns
// the next pc, or done when the path ends.
func (v *verifier) step() (next int, done bool, err error) {
	ins := v.insns[v.pc]
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		return v.pc + 1, false, v.checkALU(ins)
	case asm.ClassLD:
		if ins.Opcode == asm.OpLDDW {
			return v.pc + 2, false, v.checkLDDW(ins, v.insns[v.pc+1])
		}
		return v.pc + 1, false, v.checkLegacyPacket(ins)
	case asm.ClassLDX:
		return v.pc + 1, false, v.checkLoad(ins)
	case asm.ClassST, asm.ClassSTX:
		if ins.Opcode&0xe0 == asm.ModeATOMIC {
			return v.pc + 1, false, v.checkAtomic(ins)
		}
		return v.pc + 1, false, v.checkStore(ins)
	default:
		return v.checkJump(ins)
	}
}

func (v *verifier) checkLDDW(lo, hi asm.Instruction) error {
	dst := &v.st.cur().regs[lo.Dst]
	switch lo.Src {
	case 0:
		*dst = scalarReg(constScalar(uint64(uint32(lo.Imm)) | uint64(uint32(hi.Imm))<<32))
	case asm.PseudoMapFD:
		*dst = reg{typ: constPtrMap, off: constScalar(0), mapIdx: int(lo.Imm)}
	case asm.PseudoMapValue:
		mi := v.maps[lo.Imm]
		if !mi.hasDirect {
			return v.fail(ErrInvalidAccess, "map %d has no directly addressable value", lo.Imm)
		}
		*dst = reg{typ: ptrMapValue, off: constScalar(uint64(uint32(hi.Imm))), size: int64(len(mi.direct)),
			mapIdx: int(lo.Imm), readOnly: mi.readOnly}
	case asm.PseudoFunc:
		*dst = reg{typ: ptrFunc, off: constScalar(0), mapIdx: v.pc + 1 + int(lo.Imm)}
	default:
		return v.fail(ErrUnsupported, "lddw with src %d", lo.Src)
	}
	return nil
}

// checkLegacyPacket handles LD_ABS and LD_IND: the interpreter bounds-checks
// them against the packet itself, so they only write r0 and clobber r1-r5.
func (v *verifier) checkLegacyPacket(ins asm.Instruction) error {
	if ins.Opcode&0xe0 == asm.ModeIND {
		src, err := v.readReg(ins.Src)
		if err != nil {
			return err
		}
		if src.typ != scalarValue {
			return v.fail(ErrPointerArith, "R%d is a %s, packet index must be a number", ins.Src, src.typ)
		}
	}
	f := v.st.cur()
	for r := asm.R1; r <= asm.R5; r++ {
		f.regs[r] = reg{}
	}
	size := map[uint8]int{asm.SizeB: 1, asm.SizeH: 2, asm.SizeW: 4}[ins.Opcode&0x18]
	f.regs[asm.R0] = scalarReg(rangeScalar(0, 1<<(8*size)-1))
	return nil
}
