package kerneldiff

import "fmt"

// Layout of the map element programs work on (array map, key 0, one
// element): a data area the program reads and writes, then where the main
// function stores r0..r8 and its stack before exiting.
const (
	// DataSize is the size of the data area at the start of the element.
	DataSize = 128
	// RegsOffset is where r0..r8 land at exit, 8 bytes each.
	RegsOffset = DataSize
	// SavedRegs is the number of registers stored (r0..r8; r9 holds the
	// element's address and r10 the frame pointer).
	SavedRegs = 9
	// StackOffset is where the stack words land: word j holds the 8 bytes
	// at r10 - StackSize + 8*j.
	StackOffset = RegsOffset + 8*SavedRegs
	// StackSize is the part of each frame's stack that programs use.
	StackSize = 64
	// ValueSize is the size of the element.
	ValueSize = StackOffset + StackSize
)

// WordName names the 8-byte word at off in the element, for diffs.
func WordName(off int) string {
	switch {
	case off < DataSize:
		return fmt.Sprintf("data[%d]", off)
	case off < StackOffset:
		return fmt.Sprintf("r%d", (off-RegsOffset)/8)
	case off < ValueSize:
		return fmt.Sprintf("stack[r10%+d]", off-StackOffset-StackSize)
	}
	return fmt.Sprintf("value[%d]", off)
}
