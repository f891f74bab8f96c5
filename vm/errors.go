package vm

import (
	"errors"
	"fmt"
)

// Errors a run can end with. They are wrapped in a *RunError that names the
// pc; test for them with errors.Is.
var (
	ErrMemoryAccess    = errors.New("memory access outside the program's regions")
	ErrMisaligned      = errors.New("misaligned atomic access")
	ErrReadOnly        = errors.New("write to read-only memory")
	ErrBudgetExceeded  = errors.New("instruction budget exceeded")
	ErrCallDepth       = errors.New("bpf-to-bpf call depth exceeded")
	ErrUnknownHelper   = errors.New("call to a helper that is not registered")
	ErrHelperPanicked  = errors.New("helper panicked")
	ErrInvalidCallback = errors.New("invalid callback")
)

// RunError is the error a run ends with when the program does something it
// may not. PC is the index of the instruction slot that failed.
type RunError struct {
	PC   int
	Addr uint64 // the address, for memory errors
	Size int    // the access size, for memory errors
	Err  error
}

func (e *RunError) Error() string {
	if e.Size != 0 {
		return fmt.Sprintf("pc %d: %d-byte access at %#x: %v", e.PC, e.Size, e.Addr, e.Err)
	}
	return fmt.Sprintf("pc %d: %v", e.PC, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// LoadError reports an instruction that fails structural validation. Index
// is the instruction slot.
type LoadError struct {
	Program string
	Index   int
	Err     error
}

func (e *LoadError) Error() string {
	if e.Program != "" {
		return fmt.Sprintf("program %s: instruction %d: %v", e.Program, e.Index, e.Err)
	}
	return fmt.Sprintf("instruction %d: %v", e.Index, e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }

// Sentinel causes of a LoadError.
var (
	ErrUnknownOpcode   = errors.New("unknown opcode")
	ErrInvalidRegister = errors.New("invalid register")
	ErrInvalidField    = errors.New("invalid instruction field")
	ErrJumpOutOfRange  = errors.New("jump target outside the program")
	ErrJumpIntoLDDW    = errors.New("jump into the middle of an lddw")
	ErrIncompleteLDDW  = errors.New("incomplete lddw")
	ErrFallsOffEnd     = errors.New("execution can fall off the end of the program")
	ErrWriteToR10      = errors.New("r10 is read-only")
	ErrEmptyProgram    = errors.New("program has no instructions")
	ErrHelperMissing   = errors.New("helper is not provided")
	ErrUnresolvedMap   = errors.New("unresolved map reference")
	ErrUnsupported     = errors.New("instruction not supported in userspace")
)
