package asm

import "fmt"

// LineError is an assembly error at one line of the source.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// SlotError says why Disassemble could not show a slot as an instruction.
// The slot still appears in the text, as a .raw directive.
type SlotError struct {
	Slot   int
	Ins    Instruction
	Reason string
}

func (e *SlotError) Error() string {
	return fmt.Sprintf("slot %d (0x%016x): %s", e.Slot, rawValue(e.Ins), e.Reason)
}
