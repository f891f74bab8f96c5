package jit

import (
	"unsafe"

	"github.com/uebpf/uebpf/jit/internal/backend"
)

// directCapable reports whether p, compiled to c with o, can have a
// direct entry (Program.Direct): the back end's stub gives it only r1 and
// a budget, and nothing can fail. Code that is not resumable gets a
// budget it cannot overdraw; resumable code gets one slice of it (it is
// lean, so Program.budget is a slice) and continues in directFallback
// when the slice runs out.
func directCapable(p *Program, c *backend.Code, o backend.Options) bool {
	return p.path == pathStackless && !p.calls && !c.Packet && !(o.Checked && c.Memory) &&
		(p.resumable || p.budget > int64(len(p.vp.Instructions()))) && !o.TrapSlowPaths
}

// directFallback is where the direct entry of resumable code continues
// when the slice it gave the code ran out: the run starts again with an
// Env, as on runFrame's frame (frameError), which is the same run since
// such code stores nothing. The entry jumps here as if its caller had
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
