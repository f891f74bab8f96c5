package jit

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/uebpf/uebpf/vm"
)

// enter runs generated code with state s until it returns to Go (see
// trampoline_linux_amd64.s).
//
//go:noescape
func enter(s *runState, stub uintptr)

// run runs the program with ctx as its context (r1 = 0 if it is empty): a
// lean program (see Program.lean) on runFrame's frame without an Env, any
// other with an Env from the program's pools (runEnv), as Program.path
// says. It is in
// assembly (trampoline_linux_amd64.s), so that Program.Run, which only
// calls it, inlines into its callers: a run of a lean program is one call
// from Go. The root package's run (assembly too) jumps to it with its
// arguments in place, so that uebpf.Program.Run inlines as well.
func run(p *Program, ctx []byte) (r0 uint64, err error)

// runShort is run of a context shorter than the one p was verified for
// (Program.minContext): an error, and no run.
func runShort(p *Program, ctx []byte) (uint64, error) {
	return 0, p.shortContext(uint64(len(ctx)))
}

// runPointer is run with the size bytes at ctx as the context: the same
// frame layout, and the same code.
func runPointer(p *Program, ctx unsafe.Pointer, size, _ uintptr) (r0 uint64, err error)

// execLean is Exec of a lean program whose start stub is at start: see
// trampoline_linux_amd64.s.
func execLean(s *runState, start uintptr, budget uint64) (r0, reason uint64)

// envExecuted is where execLean records what a run executed.
const envExecuted = vm.EngineExecutedOffset

// runFrame and runFramePlain run a lean program on their own frame, and
// runEnv runs any other with an Env: see trampoline_linux_amd64.s.
func runFrame(p *Program, ctx []byte) (r0 uint64, err error)
func runFramePlain(p *Program, ctx []byte) (r0 uint64, err error)

// runRoot and runRootStackless are runFramePlain for the root package's
// Program.Run, with its *uebpf.Program (whose first field is the
// *Program) and the context's address and length: see
// trampoline_linux_amd64.s.
func runRoot(p unsafe.Pointer, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)
func runRootStackless(p unsafe.Pointer, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)
func runEnv(p *Program, ctx []byte) (r0 uint64, err error)

// runEnvABI is runEnv's Go part.
func runEnvABI(p *Program, ctx []byte) (uint64, error) {
	return p.runEnv(unsafe.Pointer(unsafe.SliceData(ctx)), uintptr(len(ctx)))
}

// frameError returns the result of a run of p with the size bytes at ctx
// as its context, on runFrame's frame, that generated code ended with
// reason: its error, or when the code ended the slice of its budget that
// a lean run gets (see Program.budget), the result of running it again
// with an Env, which can take its whole budget in slices.
func frameError(p *Program, ctx unsafe.Pointer, size uintptr, reason, pc, addr, n uint64) (uint64, error) {
	if reason&0xff == reasonSlice {
		if size == 0 {
			ctx = nil // as run passes it
		}
		if p.frameSetup&frameSetupZeroStack != 0 { // tests: a zeroed stack, as on a new Env
			e := vm.NewEnv()
			e.SetOnlyContext(ctx, size, true)
			return p.execFull(e)
		}
		return p.runEnv(ctx, size)
	}
	return 0, exitError(reason, pc, addr, n)
}

// leanError records what a lean run that failed executed and returns its
// error.
func leanError(e *vm.Env, s *runState, budget uint64) error {
	e.SetExecuted(executed(s.reason, budget, s.budget, 0))
	return exitError(s.reason, s.exitPC, s.exitAddr, s.exitSize)
}

// executed returns what a run with budget that ended with reason, left
// in the budget register and kept reserve in Go executed. A run that
// exceeded its budget executed all of it, as the interpreter counts,
// though the block that failed overdrew it.
func executed(reason, budget uint64, left int64, reserve uint64) uint64 {
	if reason&0xff == reasonBudget {
		return budget
	}
	return budget - reserve - uint64(left)
}

// exitError returns the error of a run that generated code ended with
// reason (not a helper call or a return into another program).
func exitError(reason, pc, addr, size uint64) error {
	switch reason & 0xff {
	case reasonFault:
		return &vm.RunError{PC: int(pc), Addr: addr, Size: int(size), Err: vm.ErrMemoryAccess}
	case reasonMisaligned:
		return &vm.RunError{PC: int(pc), Addr: addr, Size: int(size), Err: vm.ErrMisaligned}
	case reasonBudget: // the pc rides in the reason
		return &vm.RunError{PC: reasonPC(reason, pc), Err: vm.ErrBudgetExceeded}
	case reasonCallDepth:
		return &vm.RunError{PC: reasonPC(reason, pc), Err: vm.ErrCallDepth}
	}
	return &vm.RunError{PC: int(pc), Err: fmt.Errorf("jit: generated code returned unknown reason %d", reason)}
}

// Exec runs the program with the arguments, regions and budget set on e
// and returns r0, exactly as vm.Program.Exec does. Errors are
// *vm.RunError values. A program compiled with Options.Verified refuses
// an Env whose r2 (the context's length, as SetContext sets it) is
// shorter than the context it was verified for; r1 must point to that
// many bytes.
func (p *Program) Exec(e *vm.Env) (uint64, error) {
	if e.Args()[1] < uint64(p.minContext) {
		return 0, p.shortContext(e.Args()[1])
	}
	// Lean code that can run long takes the full path: a lean run of it
	// gets only a slice, and starting it again on the same Env would
	// not be the same run (its stack is the Env's).
	if p.lean && !p.resumable {
		// Nothing to add to the Env's regions for the run, and no helper
		// can look at the Env during it: there is nothing to prepare but
		// the budget. Unlike a full run, a lean one does not make
		// vm.Env.Program return the program (nothing can ask during the
		// run).
		budget := e.Budget()
		if budget == 0 {
			budget = p.vp.Budget()
		}
		budget = min(budget, maxBudget)
		s := stateOf(e)
		r0, reason := execLean(s, p.start, budget)
		runtime.KeepAlive(p) // its code was running
		if reason != reasonExit {
			return 0, leanError(e, s, budget)
		}
		return r0, nil
	}
	return p.execFull(e)
}

// execFull is Exec for programs that are not lean (or closed).
func (p *Program) execFull(e *vm.Env) (uint64, error) {
	if p.mem == nil {
		return 0, ErrClosed
	}
	// The state lives in the Env: no allocation, no sharing, and the
	// start stub sets it up, reading the arguments from the Env.
	s := stateOf(e)
	budget, mark := e.BeginRun(p.vp)
	budget = min(budget, maxBudget)
	sl := p.setBudget(s, budget)
	if p.needsSave {
		return p.execWithSaveArea(e, s, budget, mark, sl)
	}
	enter(s, p.start)
	if s.reason != reasonExit {
		r0, err := p.continueRun(e, s, &sl)
		e.SetExecuted(executed(s.reason, budget, s.budget, sl.reserve))
		e.EndRun(mark)
		return r0, err
	}
	runtime.KeepAlive(p) // its code is running
	e.SetExecuted(budget - sl.reserve - uint64(s.budget))
	e.EndRun(mark)
	return s.regs[0], nil
}

// execWithSaveArea is Exec for programs whose helper calls may happen
// inside local calls: they need a save area for the native stack.
func (p *Program) execWithSaveArea(e *vm.Env, s *runState, budget uint64, mark int, sl budgetSlices) (uint64, error) {
	save := p.fam.saveArea(s)
	enter(s, p.start)
	r0, err := s.regs[0], error(nil)
	if s.reason != reasonExit {
		r0, err = p.continueRun(e, s, &sl)
	}
	s.saveArea = 0 // the buffer goes back to the pool
	p.fam.saveAreas.Put(save)
	e.SetExecuted(executed(s.reason, budget, s.budget, sl.reserve))
	e.EndRun(mark)
	return r0, err
}

// continueRun handles everything but a normal exit: helper calls, tail
// calls and errors, re-entering generated code until the run ends.
func (p *Program) continueRun(e *vm.Env, s *runState, sl *budgetSlices) (r0 uint64, err error) {
	cur := p
	var save *[saveAreaBytes]byte // for tail-call targets that need one
	// One deferred function for the whole run, not one per helper call:
	// it gives back the save area and turns a helper's panic (Go code the
	// embedder wrote) into the run's error instead of taking the host
	// down. Nothing else here panics.
	defer func() {
		if save != nil {
			s.saveArea = 0
			p.fam.saveAreas.Put(save)
		}
		if v := recover(); v != nil {
			r0, err = 0, &vm.RunError{PC: int(s.exitPC), Err: fmt.Errorf("%w: %v", vm.ErrHelperPanicked, v)}
		}
		runtime.KeepAlive(p) // and the family, whose code was running
	}()
	for {
		pc := int(s.exitPC)
		switch s.reason & 0xff {
		case reasonExit:
			return s.regs[0], nil
		case reasonHelper, reasonCallX, reasonHashLookup, reasonHashUpdate:
			kind, r := s.reason&0xff, &s.regs
			if kind == reasonHashLookup || kind == reasonHashUpdate {
				// Go answers what it can without the helper, as the
				// interpreter does.
				if r0, ok := e.CallHash(kind == reasonHashUpdate, r[1], r[2], r[3], r[4]); ok {
					r[0] = r0
					break
				}
			}
			var fn vm.HelperFunc
			if kind != reasonCallX {
				fn = cur.helpers[s.reason>>8]
			} else if n := s.regs[cur.vp.Instructions()[pc].Dst]; n <= 1<<31-1 {
				fn = cur.vp.Helpers()[int32(n)].Func
			}
			if fn == nil {
				return 0, &vm.RunError{PC: pc, Err: vm.ErrUnknownHelper}
			}
			// The helper charges its work to the run's budget (vm.Env.Charge).
			total := sl.reserve + uint64(s.budget)
			e.SetHelperBudget(total)
			s.regs[0] = fn(e, s.regs[1], s.regs[2], s.regs[3], s.regs[4], s.regs[5])
			if left := e.HelperBudget(); left != total {
				// The charge comes out of the slice, so that the slice
				// measures work; the reserve pays what the slice cannot.
				s.budget -= int64(total - left)
				if s.budget < 0 {
					sl.reserve -= uint64(-s.budget)
					s.budget = 0
				}
			}
			// The helper may have withdrawn a region (a ring buffer
			// record it submitted): forget the ones that allowed the
			// last accesses.
			s.hotReadEnd, s.hotWriteEnd = 0, 0
			if e.HelperStatus() {
				next, r0, err := e.HelperResult(pc)
				if next == nil {
					return r0, err
				}
				t, err := cur.fam.tailTarget(next)
				if err != nil {
					return 0, &vm.RunError{PC: pc, Err: fmt.Errorf("jit: tail call target: %w", err)}
				}
				cur = t
				s.resumePC, s.progTag = uint64(t.entry), uint64(t.tag)
				if !t.resumable { // its budget exits are final: it gets all
					s.budget += int64(sl.reserve)
					sl.reserve = 0
				}
				if t.needsSave && s.saveArea == 0 {
					save = p.fam.saveArea(s)
				}
			}
		case reasonSlice:
			pc = reasonPC(s.reason, s.exitPC)
			if err := sl.next(e, s); err != nil {
				if err == vm.ErrBudgetExceeded {
					s.reason = s.reason&^0xff | reasonBudget // it executed all of it
				}
				return 0, &vm.RunError{PC: pc, Err: err}
			}
		case reasonReturn:
			cur = p.fam.owner(s.resumePC)
			e.SetProgram(cur.vp)
			s.progTag = uint64(cur.tag)
		default:
			return 0, exitError(s.reason, s.exitPC, s.exitAddr, s.exitSize)
		}
		enter(s, p.enter)
	}
}

// saveArea gets a save area for the native stack and records it in s. The
// caller keeps the returned buffer alive for the run, then puts it back.
func (f *family) saveArea(s *runState) *[saveAreaBytes]byte {
	b, ok := f.saveAreas.Get().(*[saveAreaBytes]byte)
	if !ok {
		b = new([saveAreaBytes]byte)
	}
	s.saveArea = uint64(uintptr(unsafe.Pointer(b)))
	return b
}
