package jit

import (
	"unsafe"

	"github.com/uebpf/uebpf/jit/internal/backend"
)

// directCapable reports whether p, compiled to c with o, can have a
// direct entry (Program.Direct): the back end's stub gives it only r1 and
// a budget it cannot overdraw, and nothing can fail.
func directCapable(p *Program, c *backend.Code, o backend.Options) bool {
	return p.path == pathStackless && !p.resumable && !p.calls && !c.Packet &&
		!(o.Checked && c.Memory) && p.budget > int64(len(p.vp.Instructions())) && !o.TrapSlowPaths
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
