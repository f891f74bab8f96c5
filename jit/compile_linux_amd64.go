package jit

import (
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/uebpf/uebpf/vm"
)

// compile compiles a member of the family. The caller holds f.mu or is the
// only one who can see f.
func (f *family) compile(vp *vm.Program) (*Program, error) {
	var key uint64
	if f.opts.Blind {
		key = rand.Uint64() | 1<<31 // never 0 in the low word
	}
	tag := nextTag.Add(1)
	// The proof covers its own program only, not tail-call targets.
	opts := f.opts
	proved := opts.Verified != nil && opts.Verified.Program() == vp
	if proved {
		opts.Unchecked = true
	}
	c := newCompiler(vp, &opts, hostFeatures(&opts), key, tag)
	defer c.release()
	code, err := c.compile()
	if err != nil {
		return nil, err
	}
	// The direct entry is appended to the code, so it is decided before
	// the code is mapped, on the run path the Program will have.
	probe := &Program{vp: vp, calls: c.Calls, resumable: c.resumable()}
	probe.setRunPath(c)
	direct, minContext := -1, 0
	if proved {
		minContext = opts.Verified.ContextSize
	}
	var shortErr error
	if directCapable(probe, c) {
		shortErr = fmt.Errorf("program %s: context shorter than %d bytes: %w", vp.Name(), minContext, ErrShortContext)
		code, direct = appendDirect(code, c.bodyOff, probe.budget, minContext, shortErr, keepsRegs(c.insns))
	}
	mem, err := mapCode(code)
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", vp.Name(), err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	p := &Program{
		vp:    vp,
		fam:   f,
		mem:   mem,
		entry: base + uintptr(c.bodyOff),
		start: base + uintptr(c.startOff),
		enter: base + uintptr(c.enterOff),
		tag:   tag,

		needsSave: c.Local && (c.Calls || c.resumable()),
		calls:     c.Calls,
		resumable: c.resumable(),
	}
	p.helpers = helperTable(vp, c.helperExits)
	p.minContext = minContext
	p.setRunPath(c)
	if direct >= 0 {
		p.direct, p.directCode = directFunc(p, base+uintptr(direct))
		p.shortErr = shortErr
	}
	f.register(p)
	return p, nil
}
