//go:build linux && (amd64 || arm64)

package jit

import (
	"fmt"
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
