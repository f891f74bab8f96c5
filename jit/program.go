package jit

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// Program is a vm.Program compiled to native code. Like vm.Program it is
// immutable once compiled and safe for concurrent runs, each with its own
// Env.
type Program struct {
	// path says where run continues: runFramePlain, runFrame or runEnv
	// (see setRunPath). It is the first field so that the root package
	// can find it: its Run goes straight to runRoot or runRootStackless
	// when it says so.
	path  uint8
	vp    *vm.Program
	fam   *family
	mem   []byte  // the executable mapping, nil once closed
	entry uintptr // first instruction of the body
	start uintptr // start stub: the entry point of a run
	enter uintptr // enter stub: the entry point when resuming
	tag   uint32  // identifies this code to the run-time tag checks
	// needsSave: helper exits may happen inside local calls, so a run
	// needs a save area for the native stack.
	needsSave bool
	// calls: the program calls helpers (or may: callx, lookups that fall
	// back to the helper).
	calls bool
	// resumable: the code can run long (it has a backward jump or a
	// local call), so it gets its budget in slices and comes back to Go
	// when one runs out (backend.ReasonSlice; see setBudget). Such code is never
	// lean: a lean run's state dies with its frame.
	resumable bool
	// lean: a run needs nothing of an Env but its arguments, stack and
	// the context's region: the program calls no helper (so no tail call
	// either, and nothing can look at the Env during the run) and, if it
	// checks memory, has no static regions. Exec then skips engine.BeginRun and
	// EndRun, and Run and RunPointer need no Env at all (enterFrame).
	lean bool
	// frameSetup says what enterFrame sets up besides the registers, the
	// budget and the native stack: only what the code reads (frameSetup*).
	frameSetup uint8
	// budget is what a run on runFrame's frame gets: the program's
	// budget, bounded by maxBudget, or for lean code that can run long,
	// one slice of it (see setRunPath).
	budget int64
	// minContext is the context size the program was verified for
	// (Options.Verified): runs with a shorter context are refused.
	minContext int
	// direct, when not nil, calls the code with nothing in between (see
	// Direct); directCode is its func value's code word, which Close
	// points at closedRun.
	direct     func(ctx []byte) (uint64, error)
	directCode *uintptr
	// shortErr is what direct returns for a context shorter than
	// minContext: the entry has no Go code to build an error with.
	shortErr error
	// helpers holds the functions of the helper calls through the general
	// path, by the index their exits put in the reason's upper bits.
	helpers []vm.HelperFunc

	cleanup runtime.Cleanup
	envs    vm.EnvPool
	// bare recycles the Envs of runs of a program that calls no helper,
	// without Reset (see RunPointer).
	bare sync.Pool
	// arrayTable and arrays are engine.ArrayMaps, for the array
	// lookups Go answers (backend.ReasonArrayLookup).
	arrayTable uint64
	arrays     []engine.ArrayMap
}

// family is a compiled program and the tail-call targets compiled for it
// on demand. They share options, and their code may call into each other
// through the native stack, so they live and die together.
type family struct {
	opts Options
	mu   sync.Mutex
	// progs holds every member by the vm.Program it was compiled from.
	progs map[*vm.Program]*Program
	// saveAreas recycles the native-stack save areas of runs.
	saveAreas sync.Pool
}

// VM returns the program this one was compiled from.
func (p *Program) VM() *vm.Program { return p.vp }

// CodeSize returns the size of the program's machine code in bytes.
func (p *Program) CodeSize() int { return len(p.mem) }

// Run runs the program with mem as its context (r1 = its address, r2 = its
// length) and returns r0, like vm.Program.Run.
func (p *Program) Run(mem []byte) (uint64, error) {
	// run passes an empty context as r1 = 0, as vm does for Run, and
	// refuses one shorter than the program was verified for (a check in
	// assembly, so that Run inlines into its callers: one call).
	return run(p, mem)
}

// Direct returns p as a Go func value that calls its machine code with
// nothing in between (no assembly trampoline, no ABI wrapper), the
// cheapest way to run a short program many times; it behaves as Run. It
// is nil unless p's code can be entered that way: on amd64, code that
// never names r10, makes no bpf-to-bpf calls, calls no helper, reads no
// packet and, if checked, accesses no memory, which covers filters; code
// with loops also stores nothing and leaves r6, r8 and r9 alone (such as
// a string comparison), and a run of it that takes more than one slice
// of its budget continues in Go, as Run's does. Checked code that reads
// memory has one too if it stores nothing at all and leaves r6, r8 and
// r9 alone: a run whose check fails continues in Go, which runs it again
// for the error Run returns. After Close the func
// returns ErrClosed; like Run, it must not be running when Close is
// called.
func (p *Program) Direct() func(ctx []byte) (uint64, error) { return p.direct }

// closedRun is what Direct's func runs once p is closed.
func closedRun([]byte) (uint64, error) { return 0, ErrClosed }

// closedRunCode is closedRun's code address, the word of its func value.
var closedRunCode = func() uintptr {
	f := closedRun
	return **(**uintptr)(unsafe.Pointer(&f))
}()

// RunContext is Run with a context: cancelling ctx or reaching its
// deadline ends the run with a *vm.RunError wrapping ctx.Err(), as
// vm.Program.RunContext does. Code that can run long (loops, local
// calls) checks ctx each time it has used a slice of its budget; other
// code is bounded by its length and checks it only when it starts.
func (p *Program) RunContext(ctx context.Context, mem []byte) (uint64, error) {
	if len(mem) < p.minContext {
		return 0, p.shortContext(uint64(len(mem)))
	}
	if err := ctx.Err(); err != nil {
		return 0, &vm.RunError{Err: err}
	}
	if ctx.Done() == nil || !p.resumable {
		return p.Run(mem)
	}
	e := p.envs.Get()
	e.SetContext(mem)
	e.SetRunContext(ctx)
	r0, err := p.Exec(e)
	p.envs.Put(e)
	return r0, err
}

// RunPointer runs the program with the size bytes at ctx as its context,
// like vm.Program.RunPointer. The caller keeps ctx alive during the call.
func (p *Program) RunPointer(ctx unsafe.Pointer, size uintptr) (uint64, error) {
	if size < uintptr(p.minContext) {
		return 0, p.shortContext(uint64(size))
	}
	if size == 0 && ctx != nil { // r1 = ctx, which run would make 0
		return p.runEnv(ctx, 0)
	}
	return runPointer(p, ctx, size, size)
}

// runEnv is run with an Env from the program's pools, for programs that
// are not lean.
func (p *Program) runEnv(ctx unsafe.Pointer, size uintptr) (uint64, error) {
	if p.calls {
		e := p.envs.Get()
		e.SetContextPointer(ctx, size, true)
		r0, err := p.Exec(e)
		p.envs.Put(e)
		return r0, err
	}
	// A program that calls no helper changes nothing in the Env but its
	// regions and arguments, which the next run replaces: its Envs skip
	// Reset. A lean program comes here when its run is too long to be
	// lean (frameError): it runs with the Env from the start.
	e, ok := p.bare.Get().(*vm.Env)
	if !ok {
		e = vm.NewEnv()
	}
	envOf(e).SetOnlyContext(ctx, size, true)
	r0, err := p.execFull(e)
	// The pool must not keep the context reachable: it may be the
	// caller's stack (a tracepoint's payload), which moves.
	envOf(e).SetOnlyContext(nil, 0, true)
	p.bare.Put(e)
	return r0, err
}

// shortContext is the error of a run whose context (of n bytes) is
// shorter than the one the program was verified for.
func (p *Program) shortContext(n uint64) error {
	return fmt.Errorf("program %s: %d-byte context: %w (%d bytes)", p.vp.Name(), n, ErrShortContext, p.minContext)
}

// Close unmaps the program's code and that of the tail-call targets
// compiled for it. The program must not be running; running it afterwards
// returns ErrClosed. Close is idempotent. Programs that are not closed are
// unmapped when the garbage collector finds them unreachable.
func (p *Program) Close() error {
	if p.fam == nil {
		return nil
	}
	p.fam.mu.Lock()
	defer p.fam.mu.Unlock()
	for _, m := range p.fam.progs {
		m.release()
	}
	return nil
}

// maxBudget bounds the budget so that the signed counter of generated
// code cannot overflow: 2^62 instructions take decades.
const maxBudget = 1 << 62

// setRunPath records how runs of p, compiled to c (checked: with memory
// checks), enter its code: see lean. Code that cannot run on runFrame's
// frame (arm64) always runs with an Env.
func (p *Program) setRunPath(c *backend.Code, checked bool) {
	p.budget = int64(min(p.vp.Budget(), maxBudget))
	if !c.Frame {
		p.path = pathEnv
		return
	}
	insns := p.vp.Instructions()
	// Code that can run long is lean only if it has no local calls (so
	// that it ends a slice at the base of its native stack) and writes
	// nothing but its stack: a lean run gets one slice of the budget,
	// and a run that needs more starts again with an Env (frameError),
	// which is only the same run if the first wrote nothing it reads.
	p.lean = !p.calls && (!p.resumable || !c.Local && !slices.ContainsFunc(insns, writesOutsideFrame)) &&
		(!checked || engine.StaticRegions(unsafe.Pointer(p.vp)) == 0)
	if p.lean && p.resumable {
		p.budget = leanSlice(p.budget)
	}
	if checked && c.Memory {
		p.frameSetup |= frameSetupChecked
	}
	if c.Packet {
		p.frameSetup |= frameSetupPacket
	}
	if c.LiveIn&0x3f9 != 0 { // r0, r3-r9
		p.frameSetup |= frameSetupClear
	}
	switch {
	case !p.lean:
		p.path = pathEnv
	case p.resumable && !c.Flat: // runFrame records the native stack's base for the slice's end
		p.path = pathFrame
	case p.frameSetup != 0 || c.LiveIn&(1<<2) != 0 || !c.Flat:
		p.path = pathFrame
	case slices.ContainsFunc(insns, usesR10):
		p.path = pathPlain
	default:
		p.path = pathStackless
	}
}

// writesOutsideFrame reports whether ins may write memory other than the
// stack: a store or atomic through a register other than r10.
func writesOutsideFrame(ins asm.Instruction) bool {
	switch ins.Class() {
	case asm.ClassST, asm.ClassSTX:
		return ins.Dst != asm.R10
	}
	return false
}

// usesR10 reports whether ins names r10, the frame pointer.
func usesR10(ins asm.Instruction) bool { return ins.Dst == asm.R10 || ins.Src == asm.R10 }

// Where run continues (Program.path). run picks with direct jumps:
// measured on the benchmark set's shortest programs, one indirect jump
// through an address was 5-10 % slower.
const (
	pathEnv   = iota // runEnv: an Env from the program's pools
	pathFrame        // runFrame
	pathPlain        // runFramePlain
	// pathStackless: runFramePlain, and from the root package
	// runRootStackless, for code that never names r10 and so needs no
	// eBPF stack: its frame is small enough to skip the stack check.
	pathStackless
)

// Lean reports whether runs of p need no vm.Env: p calls no helper and,
// if it checks memory, has no static regions. Run and RunPointer then run
// it on a frame of their own, the fastest path. A closed program is not
// lean.
func (p *Program) Lean() bool { return p.lean }

// What enterFrame sets up for the code of a program besides the
// registers, the budget and the native stack.
const (
	// frameSetupChecked: checks read the stack's address, the region
	// list and the hot regions (checked code that accesses memory).
	frameSetupChecked = 1 << iota
	// frameSetupPacket: LD_ABS/LD_IND read the packet (none).
	frameSetupPacket
	// frameSetupClear: the code may read r0 or r3-r9 before writing
	// them, which start at 0.
	frameSetupClear
	// frameSetupZeroStack: the eBPF stack starts zeroed, as a new Env's.
	// Only tests set it, to compare runs of programs that read stack they
	// did not write with the interpreter's.
	frameSetupZeroStack
)

func (p *Program) release() {
	if p.mem == nil {
		return
	}
	p.cleanup.Stop()
	unmapCode(p.mem)
	p.mem = nil
	p.lean = false // runs take the full path, which returns ErrClosed
	if p.directCode != nil {
		atomic.StoreUintptr(p.directCode, closedRunCode)
	}
	p.path = pathEnv
}

// owner returns the member whose code holds the address pc.
func (f *family) owner(pc uint64) *Program {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.progs {
		base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.mem))))
		if pc-base < uint64(len(m.mem)) {
			return m
		}
	}
	return nil
}

// The root package reads path at offset 0 of a Program (engine.RootPath).
var (
	_ [0]struct{}                    = [unsafe.Offsetof(Program{}.path)]struct{}{}
	_ [engine.PathPlain]struct{}     = [pathPlain]struct{}{}
	_ [engine.PathStackless]struct{} = [pathStackless]struct{}{}
)

// shortContextError is what a direct entry returns for a context shorter
// than the program needs. It is made on every compile that gets a direct
// entry (one per tracepoint filter attached), so it formats its message
// only when asked.
type shortContextError struct {
	name string
	min  int
}

func (e *shortContextError) Error() string {
	return fmt.Sprintf("program %s: context shorter than %d bytes: %v", e.name, e.min, ErrShortContext)
}

func (e *shortContextError) Unwrap() error { return ErrShortContext }
