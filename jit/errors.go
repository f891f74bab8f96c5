package jit

import "errors"

var (
	// ErrUnsupportedArch is returned by Compile on a platform without a
	// JIT backend (anything but linux/amd64 for now).
	ErrUnsupportedArch = errors.New("jit: no native backend for this platform")
	// ErrClosed is returned when running a Program after Close.
	ErrClosed = errors.New("jit: program is closed")
)
