package jit

import (
	"slices"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// directCapable reports whether p, compiled to c with o, can have a
// direct entry (Program.Direct): the back end's stub gives it only r1, a
// budget and, if it checks memory, the context as its only region. Code
// that is not resumable gets a budget it cannot overdraw; resumable code
// gets one slice of it (it is lean, so Program.budget is a slice) and
// continues in directFallback when the slice runs out, as checked code
// does when a check fails (see directChecked).
func directCapable(p *Program, c *backend.Code, o backend.Options) bool {
	if p.calls || c.Packet || o.TrapSlowPaths ||
		!p.resumable && p.budget <= int64(len(p.vp.Instructions())) {
		return false
	}
	if o.Checked && c.Memory {
		return directChecked(p, c)
	}
	return p.path == pathStackless
}

// directChecked reports whether checked code that accesses memory can
// have a direct entry: it would run on runRootStackless's path but for
// its checks (lean, stackless, reading no register but r1 before writing
// it, no local calls) and it stores nothing at all. A failed check's
// error carries what a run on runFrame's frame reports, which the entry
// cannot build: it leaves to directFallback, which runs the program
// again with an Env and returns exactly Run's error, the same run since
// the first attempt wrote nothing.
func directChecked(p *Program, c *backend.Code) bool {
	insns := p.vp.Instructions()
	return p.lean && p.frameSetup == frameSetupChecked && c.LiveIn&(1<<2) == 0 && !c.Local &&
		!slices.ContainsFunc(insns, usesR10) && !slices.ContainsFunc(insns, stores)
}

// stores reports whether ins writes memory: a store or an atomic.
func stores(ins asm.Instruction) bool {
	c := ins.Class()
	return c == asm.ClassST || c == asm.ClassSTX
}

// directNoStack is the stack of checked code's direct entries, which
// never name r10: zeros that nothing writes (see backend.Direct).
var directNoStack [vm.StackSize]byte

// directFallback is where the direct entry of resumable code continues
// when the slice it gave the code ran out, and that of checked code when
// a check failed: the run starts again with an Env, as on runFrame's
// frame (frameError), which is the same run since such code stores
// nothing. The entry jumps here as if its caller had
// called directFallback with p.
func directFallback(p *Program, ctx []byte) (uint64, error) {
	var mem unsafe.Pointer
	if len(ctx) > 0 { // an empty context is r1 = 0, as run passes it
		mem = unsafe.Pointer(unsafe.SliceData(ctx))
	}
	return p.runEnv(mem, uintptr(len(ctx)))
}

// directFallbackCode returns directFallback's code address (internal
// ABI). It is not a variable: compile, which needs it, is in its
// initialization's dependencies.
func directFallbackCode() uintptr {
	f := directFallback
	return **(**uintptr)(unsafe.Pointer(&f))
}

// errorWords returns err's two interface words.
func errorWords(err error) [2]uintptr { return *(*[2]uintptr)(unsafe.Pointer(&err)) }

// directFunc makes p's func value whose code is at entry, and returns it
// with the address of its code word. A func value points at a closure:
// the code's address, then what the code captured, here p, so that the
// func keeps p and its code alive (the code ignores its closure).
func directFunc(p *Program, entry uintptr) (func([]byte) (uint64, error), *uintptr) {
	fv := &struct {
		code uintptr
		p    *Program
	}{entry, p}
	return *(*func([]byte) (uint64, error))(unsafe.Pointer(&fv)), &fv.code
}
