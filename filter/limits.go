package filter

import (
	"errors"
	"fmt"
)

// Limits bound the work of compiling one expression. Each is checked
// before the work it bounds, so that a hostile expression costs little
// to refuse. A zero field means its default.
type Limits struct {
	// MaxBytes bounds the expression's length (DefaultMaxBytes).
	MaxBytes int
	// MaxDepth bounds the nesting of parentheses and unary operators
	// (DefaultMaxDepth, at most 1000).
	MaxDepth int
	// MaxNodes bounds the operands and operators of the expression
	// (DefaultMaxNodes, at most 1<<18).
	MaxNodes int
	// MaxGlobStars bounds the stars of one pattern (DefaultMaxGlobStars).
	MaxGlobStars int
	// MaxLiteralBytes bounds a string literal, after its escapes
	// (DefaultMaxLiteralBytes).
	MaxLiteralBytes int
	// MaxInstructions bounds the code, estimated from the parsed
	// expression before any is generated (DefaultMaxInstructions, which
	// is also its ceiling: a longer filter cannot jump across itself).
	MaxInstructions int
}

// The default limits. They accept the longest filters LTTng accepts of
// the usual shape: LTTng refuses more than 65536 bytes of bytecode,
// about 32 KiB of "a == 1 || ..." (3,300 comparisons, 13,000 nodes).
const (
	DefaultMaxBytes        = 65536
	DefaultMaxDepth        = 100
	DefaultMaxNodes        = 16384
	DefaultMaxGlobStars    = 32
	DefaultMaxLiteralBytes = 4096
	// DefaultMaxInstructions is the longest program whose jumps all fit
	// eBPF's 16-bit offsets; the verifier proves such a filter far from
	// its own complexity limit (BenchmarkWorstAccepted).
	DefaultMaxInstructions = 1<<15 - 1
)

// Ceilings of the limits that bound recursion: a deeper expression would
// exhaust the goroutine's stack, which no error can report. (The ceiling
// of MaxInstructions is its default.)
const (
	ceilDepth = 1000
	ceilNodes = 1 << 18
)

// ErrLimit is wrapped by the *Error of an expression that exceeds one of
// its Limits.
var ErrLimit = errors.New("filter limit exceeded")

// resolve fills in the defaults and checks the ceilings.
func (l Limits) resolve() (Limits, error) {
	for _, f := range []struct {
		v    *int
		def  int
		ceil int
		name string
	}{
		{&l.MaxBytes, DefaultMaxBytes, 0, "MaxBytes"},
		{&l.MaxDepth, DefaultMaxDepth, ceilDepth, "MaxDepth"},
		{&l.MaxNodes, DefaultMaxNodes, ceilNodes, "MaxNodes"},
		{&l.MaxGlobStars, DefaultMaxGlobStars, 0, "MaxGlobStars"},
		{&l.MaxLiteralBytes, DefaultMaxLiteralBytes, 0, "MaxLiteralBytes"},
		{&l.MaxInstructions, DefaultMaxInstructions, DefaultMaxInstructions, "MaxInstructions"},
	} {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case *f.v < 0:
			return l, fmt.Errorf("filter: Limits.%s = %d is negative", f.name, *f.v)
		case f.ceil > 0 && *f.v > f.ceil:
			return l, fmt.Errorf("filter: Limits.%s = %d is above its ceiling %d", f.name, *f.v, f.ceil)
		}
	}
	return l, nil
}

// limitf returns an *Error at column col for an exceeded limit; the
// message names the field of Limits that raises it.
func limitf(col int, format string, args ...any) *Error {
	e := errorf(col, format, args...)
	e.Err = ErrLimit
	return e
}
