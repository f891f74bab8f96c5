package filter

import "fmt"

// Error is a syntax or type error in a filter expression, or an
// expression over one of its Limits (then it wraps ErrLimit).
type Error struct {
	Column int // 1-based byte column in the expression
	Msg    string
	Err    error // ErrLimit, or nil
}

func (e *Error) Error() string { return fmt.Sprintf("column %d: %s", e.Column, e.Msg) }

func (e *Error) Unwrap() error { return e.Err }

// errorf returns an *Error at column col.
func errorf(col int, format string, args ...any) *Error {
	return &Error{Column: col, Msg: fmt.Sprintf(format, args...)}
}
