package jit

import "errors"

var (
	// ErrUnsupportedArch is returned by Compile on a platform without a
	// JIT backend (anything but linux/amd64 and linux/arm64).
	ErrUnsupportedArch = errors.New("jit: no native backend for this platform")
	// ErrClosed is returned when running a Program after Close.
	ErrClosed = errors.New("jit: program is closed")
	// ErrNotVerified is returned by Compile when Options.Verified is not
	// the verifier's proof for the program compiled.
	ErrNotVerified = errors.New("jit: Options.Verified is not a proof for this program")
	// ErrShortContext is returned by runs of a program compiled with
	// Options.Verified whose context is shorter than the one it was
	// verified for.
	ErrShortContext = errors.New("context smaller than the verified context size")
)

// errNoProgram is Compile's error for a nil program.
var errNoProgram = errors.New("jit: no program to compile (nil)")
