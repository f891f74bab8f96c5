// Package amd64 is the x86-64 back end of package jit: a compiler from a
// vm.Program, with the front end's analyses (jit/internal/frontend), to
// x86-64 code that follows the run protocol of jit/internal/backend,
// emitted with the encoders of jit/internal/x86. See jit/doc.go for the
// code it generates.
package amd64

import (
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// Arch is the x86-64 back end.
var Arch = backend.Arch{Compile: Compile, AppendDirect: appendDirect}

// Compile translates p to x86-64 code with o.
func Compile(p *vm.Program, o backend.Options) (*backend.Code, error) {
	c := newCompiler(p, &o, hostFeatures(&o), o.Key, o.Tag)
	code, err := c.compile()
	if err != nil {
		c.release()
		return nil, err
	}
	c.out = backend.Code{
		Bytes:       code,
		Body:        c.bodyOff,
		Offsets:     c.offsets,
		BodyEnd:     c.bodyEnd,
		Start:       c.startOff,
		DirectRoom:  c.directRoomOff,
		DirectLeave: c.directLeaveJump,
		Enter:       c.enterOff,
		HelperExits: c.helperExits,
		Analysis:    &c.Analysis,
		Resumable:   c.resumable(),
		NeedsSave:   c.Local && (c.Calls || c.resumable()),
		Frame:       true,
		Flat:        c.flat(),
		Release:     c.done,
	}
	return &c.out, nil
}

// Hoisted returns the number of loops of vp whose checks the checked
// compiler hoists (compile_hoist.go) and of accesses it hoists, for
// package jit's tests.
func Hoisted(vp *vm.Program) (loops, accesses int) {
	c := newCompiler(vp, &backend.Options{Checked: true}, features{}, 0, 0)
	defer c.release()
	if c.analyze() != nil {
		return 0, 0
	}
	for _, h := range c.Hoisted {
		if h {
			accesses++
		}
	}
	return len(c.Hoists), accesses
}

// InlineHashUpdates returns how many calls of vp the compiler answers with
// inline hash updates (compile_hash.go) when compiling with o, for
// package jit's tests.
func InlineHashUpdates(vp *vm.Program, o *backend.Options) int {
	return counted(vp, o, func(c *compiler) int { return c.hashUpdates })
}

// CopyIdioms returns how many copy loops of vp get wide code
// (compile_idiom.go) when compiled with o, for package jit's tests.
func CopyIdioms(vp *vm.Program, o *backend.Options) int {
	return counted(vp, o, func(c *compiler) int { return c.idioms })
}

// Selects returns how many selects of vp run without a branch
// (compile_select.go) when compiled with o, for package jit's tests.
func Selects(vp *vm.Program, o *backend.Options) int {
	return counted(vp, o, func(c *compiler) int { return c.selects })
}

// BudgetLoops returns how many loops of vp get a copy that tests the
// budget once per iteration (compile_loopbudget.go) when compiled with o,
// for package jit's tests.
func BudgetLoops(vp *vm.Program, o *backend.Options) int {
	return counted(vp, o, func(c *compiler) int { return c.budgetLoops })
}

// counted compiles vp with o (for the baseline CPU) and returns what
// count reads off the compiler after it, 0 when the compile fails.
func counted(vp *vm.Program, o *backend.Options, count func(*compiler) int) int {
	c := newCompiler(vp, o, features{}, 0, 0)
	defer c.release()
	if _, err := c.compile(); err != nil {
		return 0
	}
	return count(c)
}
