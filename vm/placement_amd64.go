package vm

import "unsafe"

// The dispatch loop runs up to twice as fast when its hot head (the moves
// of the back edge, the bounds test and the indirect jump: hotLen bytes at
// hotOffset in the function) fits one 64-byte fetch block. Go aligns
// functions to 32 bytes, so that depends on whether the linker happens to
// start the function on a 64-byte boundary or 32 bytes past one, which
// changes with any code linked before it. interpret, interpretB and
// interpretC are the same generated code laid out one after the other
// (interpretB right after interpret, interpretC one 32-byte slot further),
// so that one of them starts in the good half whatever their size, and
// the first run uses that one (ARCHITECTURE.md "Interpreter").
//
// TestDispatchPlacement checks hotOffset and hotLen against the compiled
// code and fails with the new values when a compiler lays it out anew.
const (
	hotOffset = 42
	hotLen    = 49
)

// dispatchFunc is the dispatch loop's signature, as a method expression.
type dispatchFunc = func(*Env, int, int) (int, int, uint8)

// dispatch is the copy of the dispatch loop that runs.
var dispatch = dispatchCopies()[pickDispatchCopy(dispatchStarts())]

// dispatchCopies returns the three copies, in link order.
func dispatchCopies() [3]dispatchFunc {
	return [3]dispatchFunc{(*Env).interpret, (*Env).interpretB, (*Env).interpretC}
}

// dispatchStarts returns the code addresses of the three copies.
func dispatchStarts() (starts [3]uintptr) {
	interpretSpacer() // keeps the spacer linked between the copies
	for i, f := range dispatchCopies() {
		starts[i] = codeAddr(f)
	}
	return starts
}

// pickDispatchCopy returns the first copy whose hot head fits one 64-byte
// block, or 0 when none does.
func pickDispatchCopy(starts [3]uintptr) int {
	for i, s := range starts {
		if headFits(s) {
			return i
		}
	}
	return 0
}

func headFits(start uintptr) bool { return (start+hotOffset)%64+hotLen <= 64 }

// codeAddr is the address of a method's code: the first word of the
// func value of its method expression.
func codeAddr(f dispatchFunc) uintptr {
	return **(**uintptr)(unsafe.Pointer(&f))
}
