// Package arm64 is the arm64 back end of package jit: a compiler from a
// vm.Program, with the front end's analyses (jit/internal/frontend), to
// A64 code that follows the run protocol of jit/internal/backend,
// emitted with the encoders of jit/internal/arm64 (imported under the
// same name: in this package, arm64.X0 is the encoder's).
package arm64

import (
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// Arch is the arm64 back end.
var Arch = backend.Arch{Compile: Compile}

// Compile translates p to A64 code with o.
func Compile(p *vm.Program, o backend.Options) (*backend.Code, error) {
	c := newFor(p, &o)
	code, err := c.compile()
	if err != nil {
		return nil, err
	}
	return &backend.Code{
		Bytes:       code,
		Body:        c.bodyOff,
		Offsets:     c.offsets,
		BodyEnd:     c.bodyEnd,
		Start:       c.startOff,
		Enter:       c.enterOff,
		HelperExits: c.helperExits,
		Analysis:    &c.Analysis,
		Resumable:   c.resumable(),
		// The native stack of local calls is the save area.
		NeedsSave: c.Local,
		// Go answers the array lookups not inlined.
		ArrayLookups: c.Lookups && !c.lk.lookups,
		Release:      func() {},
	}, nil
}

// newFor returns a compiler of p set up as o says.
func newFor(p *vm.Program, o *backend.Options) *a64Compiler {
	c := newA64Compiler(p, o.Checked, hasLSE(o), o.Tag)
	if o.Blind {
		c.blind, c.key = true, o.Key
	}
	c.trap = o.TrapSlowPaths
	return c
}

// counted compiles p with o and returns what count reads off the
// compiler after it, 0 when the compile fails: for package jit's tests.
func counted(p *vm.Program, o *backend.Options, count func(*a64Compiler) int) int {
	c := newFor(p, o)
	if _, err := c.compile(); err != nil {
		return 0
	}
	return count(c)
}

// InlineHashUpdates returns how many calls of p the compiler answers with
// inline hash updates (compile_hash.go) when compiling with o, for package
// jit's tests.
func InlineHashUpdates(p *vm.Program, o *backend.Options) int {
	return counted(p, o, func(c *a64Compiler) int { return c.lk.updates })
}

// Selects returns how many selects of p the compiler emits without a
// branch (compile_select.go) when compiling with o, for package jit's
// tests.
func Selects(p *vm.Program, o *backend.Options) int {
	return counted(p, o, func(c *a64Compiler) int { return c.selects })
}
