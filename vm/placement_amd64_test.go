package vm

import (
	"testing"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// hotHead finds the dispatch loop's hot head in f's code: it ends with
// the first indirect jump through a table, and begins where the first
// case jumps back to.
func hotHead(t *testing.T, f dispatchFunc) (offset, length int) {
	t.Helper()
	code := unsafe.Slice(**(***byte)(unsafe.Pointer(&f)), 512) // f points to its code pointer
	end := -1
	for pc := 0; pc < len(code); {
		in, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			t.Fatalf("decoding the dispatch loop at +%d: %v", pc, err)
		}
		next := pc + in.Len
		switch {
		case in.Op == x86asm.JMP && end < 0:
			if _, ok := in.Args[0].(x86asm.Mem); ok {
				end = next
			}
		case in.Op == x86asm.JMP && end >= 0:
			rel, ok := in.Args[0].(x86asm.Rel)
			if !ok || next+int(rel) >= end {
				t.Fatalf("the first case does not jump back to the loop's head (+%d: %v)", pc, in)
			}
			head := next + int(rel)
			return head, end - head
		}
		pc = next
	}
	t.Fatal("no table jump in the first 512 bytes of the dispatch loop")
	return 0, 0
}

// The three copies of the dispatch loop have the compiled layout that
// placement_amd64.go assumes, one of them starts in the good half of a
// 64-byte block whatever the copies' size, and dispatch is that one.
func TestDispatchPlacement(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("race and coverage builds instrument the loop: its layout differs")
	}
	starts := dispatchStarts()
	for i, f := range dispatchCopies() {
		off, n := hotHead(t, f)
		if off != hotOffset || n != hotLen {
			t.Fatalf("copy %d: hot head at +%d, %d bytes; placement_amd64.go says +%d, %d bytes: update hotOffset and hotLen", i, off, n, hotOffset, hotLen)
		}
	}
	if starts[1]%64 == starts[0]%64 && starts[2]%64 == starts[1]%64 {
		t.Fatalf("the copies start at %#x, %#x, %#x: all in the same half of a 64-byte block", starts[0], starts[1], starts[2])
	}
	i := pickDispatchCopy(starts)
	if !headFits(starts[i]) {
		t.Fatalf("copy %d at %#x: its hot head straddles two 64-byte blocks", i, starts[i])
	}
	if codeAddr(dispatch) != starts[i] {
		t.Fatalf("dispatch runs the code at %#x, not copy %d at %#x", codeAddr(dispatch), i, starts[i])
	}
	t.Logf("copies at %#x, %#x, %#x; running copy %d", starts[0], starts[1], starts[2], i)
}
