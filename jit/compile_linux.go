//go:build linux && (amd64 || arm64)

package jit

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// Supported reports whether Compile works on this platform.
const Supported = true

var nextTag atomic.Uint32

// Compile translates p to native code with the back end of this
// architecture (arch, in compile_linux_<arch>.go). Errors are
// *vm.LoadError values for instructions the JIT cannot translate, or
// mapping failures.
func Compile(p *vm.Program, opts *Options) (*Program, error) {
	if p == nil {
		return nil, errNoProgram
	}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Verified != nil && opts.Verified.Program() != p {
		return nil, fmt.Errorf("program %s: %w", p.Name(), ErrNotVerified)
	}
	fam := &family{opts: *opts, progs: map[*vm.Program]*Program{}}
	return fam.compile(p)
}

// compile compiles a member of the family with the back end of this
// architecture. The caller holds f.mu or is the only one who can see f.
func (f *family) compile(vp *vm.Program) (*Program, error) {
	opts := f.opts
	var key uint64
	if opts.Blind {
		key = rand.Uint64() | 1<<31 // never 0 in the low word
	}
	tag := nextTag.Add(1)
	// The proof covers its own program only, not tail-call targets.
	proved := opts.Verified != nil && opts.Verified.Program() == vp
	if proved {
		opts.Unchecked = true
	}
	bo := opts.backend(key, tag)
	var minContext int
	switch {
	case proved:
		minContext = opts.Verified.ContextSize
	case opts.Unchecked:
		minContext = opts.ContextSize
	}
	bo.DirectBudget, bo.DirectMinContext = int64(min(vp.Budget(), maxBudget)), minContext
	bo.DirectSlice = leanSlice(bo.DirectBudget)
	code, err := arch.Compile(vp, bo)
	if err != nil {
		return nil, err
	}
	defer code.Release()
	p := &Program{
		vp:  vp,
		fam: f,
		tag: tag,

		needsSave: code.NeedsSave,
		calls:     code.Calls,
		resumable: code.Resumable,
	}
	p.minContext = minContext
	p.setRunPath(code, bo.Checked)
	// A direct entry is appended to the code, so it is decided before the
	// code is mapped.
	machine, direct := code.Bytes, -1
	if arch.AppendDirect != nil && directCapable(p, code, bo) {
		p.shortErr = &shortContextError{name: vp.Name(), min: p.minContext}
		machine, direct = arch.AppendDirect(code, vp, backend.Direct{
			Budget:      p.budget,
			MinContext:  p.minContext,
			ShortErr:    errorWords(p.shortErr),
			Fallback:    directFallbackCode(),
			FallbackArg: uintptr(unsafe.Pointer(p)),
			Checked:     bo.Checked && code.Memory,
			NoStack:     uintptr(unsafe.Pointer(&directNoStack)),
		})
	}
	mem, err := mapCode(machine)
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", vp.Name(), err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	p.mem = mem
	p.entry = base + uintptr(code.Body)
	p.start = base + uintptr(code.Start)
	p.enter = base + uintptr(code.Enter)
	if direct >= 0 {
		p.direct, p.directCode = directFunc(p, base+uintptr(direct))
	}
	p.helpers = helperTable(vp, code.HelperExits)
	if code.ArrayLookups {
		p.arrayTable, p.arrays = engine.ArrayMaps(unsafe.Pointer(vp))
	}
	f.register(p)
	return p, nil
}

// helperTable returns the helpers that a program's exits to Go at the
// slots exits call, by exit (nil without any).
func helperTable(vp *vm.Program, exits []int32) []vm.HelperFunc {
	if len(exits) == 0 {
		return nil
	}
	hs := make([]vm.HelperFunc, len(exits))
	for i, pc := range exits {
		hs[i] = vp.Helpers()[vp.Instructions()[pc].Imm].Func
	}
	return hs
}

// register ends a back end's compile of p: its code is unmapped once p is
// collected, and its family finds it by its vm.Program.
func (f *family) register(p *Program) {
	p.cleanup = runtime.AddCleanup(p, unmapCode, p.mem)
	f.progs[p.vp] = p
}
