package jit

import (
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/vm"
)

// compile compiles a member of the family. The caller holds f.mu or is the
// only one who can see f.
func (f *family) compile(vp *vm.Program) (*Program, error) {
	tag := nextTag.Add(1)
	// The proof covers its own program only, not tail-call targets.
	opts := f.opts
	proved := opts.Verified != nil && opts.Verified.Program() == vp
	if proved {
		opts.Unchecked = true
	}
	c := newA64Compiler(vp, !opts.Unchecked, hasLSE(&opts), tag)
	if opts.Blind {
		c.blind, c.key = true, rand.Uint64()|1<<31 // never 0 in the low word
	}
	code, err := c.compile()
	if err != nil {
		return nil, err
	}
	mem, err := mapCode(code)
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", vp.Name(), err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	p := &Program{
		path:  pathEnv,
		vp:    vp,
		fam:   f,
		mem:   mem,
		entry: base + uintptr(c.bodyOff),
		start: base + uintptr(c.startOff),
		enter: base + uintptr(c.enterOff),
		tag:   tag,

		// The native stack of local calls is the save area.
		needsSave: c.Local,
		calls:     c.Calls,
		resumable: c.resumable(),
		budget:    int64(min(vp.Budget(), maxBudget)),
	}
	p.helpers = helperTable(vp, c.helperExits)
	if c.Lookups {
		p.arrayTable, p.arrays = engine.ArrayMaps(unsafe.Pointer(vp))
	}
	if proved {
		p.minContext = opts.Verified.ContextSize
	}
	f.register(p)
	return p, nil
}
