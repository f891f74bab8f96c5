package frontend

import (
	"math"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/vm"
)

// KnownMap returns the index in p's map table of the entry that r1 points
// to here, if the tracking knows it (lddw r1, map earlier in the block).
func (t *Tracking) KnownMap(p *vm.Program) (int, bool) {
	n := len(p.Maps())
	if !t.R1Known || n == 0 {
		return 0, false
	}
	off := t.R1 - uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p.Maps()))))
	m := off / engine.MapEntrySize
	if off%engine.MapEntrySize != 0 || m >= uint64(n) {
		return 0, false
	}
	return int(m), true
}

// MaxInlineValue bounds the values inline hash updates copy.
const MaxInlineValue = 64

// InlineHashUpdate returns the layout and sizes of the map that call, a
// call of one of p's helpers, updates here, if a back end may answer it
// inline (engine.HashLayout is the recipe): a HashUpdate helper on a
// writable hash map of package maps that r1 is known to point to, keys
// of 1, 2, 4 or 8 bytes, values of at most MaxInlineValue bytes, and in
// checked code the key and the value in the current frame, where no
// check is needed. Verified code relies on the verifier, which checked
// both against the map's sizes.
func (t *Tracking) InlineHashUpdate(p *vm.Program, call *asm.Instruction, checked bool) (l engine.HashLayout, keySize, valueSize int, ok bool) {
	m, ok := t.KnownMap(p)
	if !ok {
		return l, 0, 0, false
	}
	if h, known := p.Helpers()[call.Imm]; !known || !h.HashUpdate {
		return l, 0, 0, false
	}
	h, keySize, valueSize, writable := engine.HashMap(unsafe.Pointer(p), m)
	if h == nil || !writable {
		return l, 0, 0, false
	}
	if l, ok = engine.HashLayoutOf(h); !ok || l.NumSlots > math.MaxInt32 || l.SlotSize > math.MaxInt32 || l.LockStride > math.MaxInt32 {
		return l, 0, 0, false
	}
	if keySize&(keySize-1) != 0 || valueSize > MaxInlineValue {
		return l, 0, 0, false
	}
	if checked && !(t.InFrame(asm.R2, 0, keySize) && t.InFrame(asm.R3, 0, valueSize)) {
		return l, 0, 0, false
	}
	return l, keySize, valueSize, true
}
