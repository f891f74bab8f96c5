package verifier

import (
	"errors"
	"fmt"
	"strings"
)

// Rules a program can break. A *Error wraps one of them; test with
// errors.Is.
var (
	ErrUninitialized    = errors.New("read of uninitialised register or stack")
	ErrOutOfBounds      = errors.New("memory access out of bounds")
	ErrNullPointer      = errors.New("possible null pointer dereference")
	ErrInvalidAccess    = errors.New("invalid memory access")
	ErrPointerArith     = errors.New("invalid pointer arithmetic")
	ErrPointerLeak      = errors.New("pointer leak")
	ErrPointerCompare   = errors.New("invalid pointer comparison")
	ErrHelperArg        = errors.New("invalid helper argument")
	ErrHelperCall       = errors.New("invalid helper call")
	ErrReferenceLeak    = errors.New("unreleased reference")
	ErrReadOnly         = errors.New("write to read-only memory")
	ErrInfiniteLoop     = errors.New("infinite loop")
	ErrTooComplex       = errors.New("program too complex")
	ErrInvalidCall      = errors.New("invalid call")
	ErrInvalidJump      = errors.New("invalid jump")
	ErrUnreachable      = errors.New("unreachable instruction")
	ErrUnsupported      = errors.New("unsupported instruction")
	ErrInvalidReturn    = errors.New("invalid return value")
	ErrMisalignedAtomic = errors.New("misaligned atomic access")
)

// Error is why the verifier refused a program: the rule broken (Err, one
// of the sentinels above), where (PC, the instruction's disassembly and,
// when the caller gave line info, the source line), and the abstract
// register and stack state at that point.
type Error struct {
	PC     int
	Insn   string
	Line   string
	Err    error
	Detail string
	State  string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verifier: %v: %s", e.Err, e.Detail)
	if e.PC >= 0 {
		fmt.Fprintf(&b, "\n  at %d: %s", e.PC, e.Insn)
	}
	if e.Line != "" {
		fmt.Fprintf(&b, "\n  source: %s", e.Line)
	}
	if e.State != "" {
		fmt.Fprintf(&b, "\n  state: %s", e.State)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
