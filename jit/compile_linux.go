//go:build linux && (amd64 || arm64)

package jit

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/uebpf/uebpf/vm"
)

// Supported reports whether Compile works on this platform.
const Supported = true

var nextTag atomic.Uint32

// Compile translates p to native code with the back end of this
// architecture (family.compile). Errors are *vm.LoadError values for
// instructions the JIT cannot translate, or mapping failures.
func Compile(p *vm.Program, opts *Options) (*Program, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.Verified != nil && opts.Verified.Program() != p {
		return nil, fmt.Errorf("program %s: %w", p.Name(), ErrNotVerified)
	}
	fam := &family{opts: *opts, progs: map[*vm.Program]*Program{}}
	return fam.compile(p)
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
