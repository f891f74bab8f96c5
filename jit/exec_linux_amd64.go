package jit

import (
	"runtime"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
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
const envExecuted = engine.ExecutedOffset

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
	if reason&0xff == backend.ReasonSlice {
		if size == 0 {
			ctx = nil // as run passes it
		}
		if p.frameSetup&frameSetupZeroStack != 0 { // tests: a zeroed stack, as on a new Env
			e := vm.NewEnv()
			envOf(e).SetOnlyContext(ctx, size, true)
			return p.execFull(e)
		}
		return p.runEnv(ctx, size)
	}
	return 0, exitError(reason, pc, addr, n)
}

// leanError records what a lean run that failed executed and returns its
// error.
func leanError(e *vm.Env, s *runState, budget uint64) error {
	envOf(e).Executed = executed(s.reason, budget, s.budget, 0)
	return exitError(s.reason, s.exitPC, s.exitAddr, s.exitSize)
}

// Exec runs the program with the arguments, regions and budget set on e
// and returns r0, exactly as vm.Program.Exec does. Errors are
// *vm.RunError values. A program compiled with Options.Verified refuses
// an Env whose r2 (the context's length, as SetContext sets it) is
// shorter than the context it was verified for; r1 must point to that
// many bytes.
func (p *Program) Exec(e *vm.Env) (uint64, error) {
	if n := envOf(e).Args[1]; n < uint64(p.minContext) {
		return 0, p.shortContext(n)
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
		budget := envOf(e).Budget
		if budget == 0 {
			budget = p.vp.Budget()
		}
		budget = min(budget, maxBudget)
		s := stateOf(e)
		r0, reason := execLean(s, p.start, budget)
		runtime.KeepAlive(p) // its code was running
		if reason != backend.ReasonExit {
			return 0, leanError(e, s, budget)
		}
		return r0, nil
	}
	return p.execFull(e)
}
