package kerneldiff

import "fmt"

// Layout of the map element programs work on (array map, key 0, one
// element): a data area the program reads and writes, then where the main
// function stores its registers and its stack area before exiting.
const (
	// DataSize is the size of the data area at the start of the element.
	DataSize = 128
	// RegsOffset is where r0..r9 land at exit, 8 bytes each, except the
	// register holding the element's address, whose word keeps what the
	// program left there.
	RegsOffset = DataSize
	// SavedRegs is the number of register words (r0..r9).
	SavedRegs = 10
	// StackOffset is where the stack area lands: word j holds the 8 bytes
	// at r10 + base + 8*j, base being where main put its area.
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
		return fmt.Sprintf("stack area[%d]", off-StackOffset)
	}
	return fmt.Sprintf("value[%d]", off)
}
