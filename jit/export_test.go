package jit

import (
	"runtime"
	"unsafe"

	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/backend/amd64"
	"github.com/uebpf/uebpf/jit/internal/backend/arm64"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// Optimised reports whether the back end has the amd64 one's
// optimisations (inline lookups and hash updates, jump tables, lean
// runs), which some tests look for; the arm64 back end leaves them out
// (it hoists loop checks as amd64 does).
const Optimised = runtime.GOARCH == "amd64"

// Code returns the program's machine code and the offset of its body, for
// tests that disassemble it.
func Code(p *Program) (code []byte, body int) {
	base := uintptr(0)
	if len(p.mem) > 0 {
		base = uintptr(unsafe.Pointer(unsafe.SliceData(p.mem)))
	}
	return p.mem, int(p.entry - base)
}

// ZeroFrameStack makes runs of p without an Env start with a zeroed eBPF
// stack, as on a new Env.
func ZeroFrameStack(p *Program) {
	p.frameSetup |= frameSetupZeroStack
	if p.path >= pathPlain { // which set up nothing
		p.path = pathFrame
	}
}

// RunPath names where run continues for p (Program.path): "stackless",
// "plain", "frame" or "env".
func RunPath(p *Program) string {
	return [...]string{pathEnv: "env", pathFrame: "frame", pathPlain: "plain", pathStackless: "stackless"}[p.path]
}

// Hoisted returns the number of loops of vp whose checks the checked
// compiler of this architecture hoists and of accesses it hoists.
func Hoisted(vp *vm.Program) (loops, accesses int) {
	if runtime.GOARCH == "arm64" {
		return arm64.Hoisted(vp)
	}
	return amd64.Hoisted(vp)
}

// TrapSlowPaths returns o with the checked copies of loops whose checks
// are hoisted failing where they are entered, inline hash updates
// failing where they would leave for Go, and budget loops failing where
// their guard does not run their copy: a run that completes took the
// fast paths.
func TrapSlowPaths(o Options) Options {
	o.trapSlowPaths = true
	return o
}

// Inline reports whether the back end answers array lookups and hash
// updates inline (both back ends do).
const Inline = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// InlineHashUpdates returns how many calls of vp the host's compiler
// answers with inline hash updates when compiling with opts.
func InlineHashUpdates(vp *vm.Program, opts Options) int {
	return onHost(vp, opts, amd64.InlineHashUpdates, arm64.InlineHashUpdates)
}

// onHost returns what the host architecture's count of its back end
// says of vp compiled with opts.
func onHost(vp *vm.Program, opts Options, onAMD64, onARM64 func(*vm.Program, *backend.Options) int) int {
	bo := opts.backend(0, 0)
	if runtime.GOARCH == "arm64" {
		return onARM64(vp, &bo)
	}
	return onAMD64(vp, &bo)
}

// GoAnswersArrays reports whether Go answers p's array lookups at an exit
// (backend.ReasonArrayLookup) rather than its code.
func GoAnswersArrays(p *Program) bool { return p.arrays != nil }

// SetSlice makes every slice of the budget n units (0: the normal sizes)
// for the programs compiled and run afterwards, and returns a function that
// restores the normal sizes.
func SetSlice(n uint64) (restore func()) {
	sliceOverride = n
	return func() { sliceOverride = 0 }
}

// CopyIdioms returns how many copy loops of vp the amd64 compiler gives
// wide code when compiling with opts.
func CopyIdioms(vp *vm.Program, opts Options) int {
	bo := opts.backend(0, 0)
	return amd64.CopyIdioms(vp, &bo)
}

// HasSelects reports whether the back end runs selects without a branch
// (both back ends do).
const HasSelects = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// Selects returns how many selects of vp the host's compiler emits
// without a branch when compiling with opts.
func Selects(vp *vm.Program, opts Options) int {
	return onHost(vp, opts, amd64.Selects, arm64.Selects)
}

// SetCompareLoops turns the recognition of compare loops on or off and
// returns a function that restores it.
func SetCompareLoops(on bool) (restore func()) { return frontend.SetCompareLoops(on) }

// SetIdiomMinBytes sets the shortest copy the amd64 compiler's copy loops
// run wide (compile_idiom.go) and returns a function that restores it.
func SetIdiomMinBytes(n int32) (restore func()) { return amd64.SetIdiomMinBytes(n) }

// HasBudgetLoops reports whether the back end runs small loops with one
// budget test per iteration (both back ends do).
const HasBudgetLoops = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// BudgetLoops returns how many loops of vp the host's compiler runs with
// one budget test per iteration when compiling with opts.
func BudgetLoops(vp *vm.Program, opts Options) int {
	return onHost(vp, opts, amd64.BudgetLoops, arm64.BudgetLoops)
}

// SetLoopBudgets turns both compilers' budget loops on or off and
// returns a function that restores the setting.
func SetLoopBudgets(on bool) (restore func()) {
	r1, r2 := amd64.SetLoopBudgets(on), arm64.SetLoopBudgets(on)
	return func() { r2(); r1() }
}

// SetBudgetLoopMinTests sets the fewest budget tests per iteration a loop
// must make to run with one and returns a function that restores it.
func SetBudgetLoopMinTests(n int) (restore func()) { return frontend.SetBudgetLoopMinTests(n) }
