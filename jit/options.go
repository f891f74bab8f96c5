package jit

import (
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/verifier"
)

// Options tune compilation. The zero value (or nil) compiles checked code
// with every CPU feature the machine has.
type Options struct {
	// Verified is the verifier's proof that the program is safe: what
	// verifier.Verify returned for the program being compiled. Compile
	// then drops the memory checks from its loads, stores and atomics,
	// and its runs refuse a context shorter than the proof's ContextSize
	// (ErrShortContext). It is the safe way to unchecked code: Compile
	// refuses a proof of another program (ErrNotVerified). Tail-call
	// targets, which the proof does not cover, stay checked.
	Verified *verifier.Result
	// Unchecked drops the memory checks from every program of the
	// family, tail-call targets included, with no proof and no context
	// check: only for programs verified some other way (the root package
	// verifies every program of a collection) or trusted. An unchecked
	// program that goes out of bounds corrupts or crashes the host
	// process.
	Unchecked bool
	// ContextSize, with Unchecked, makes runs refuse a context shorter
	// than this many bytes (ErrShortContext), as Verified does with its
	// proof's: for code verified some other way for a context of this
	// size. Run and Direct's func check it where they start.
	ContextSize int
	// Blind XORs every immediate of the program with a per-program random
	// key, so that attacker-chosen constants never appear verbatim in
	// executable memory (a defence against JIT spraying). It costs an
	// instruction or two per immediate.
	Blind bool
	// AMD64 and ARM64 tune the back end of that architecture; the
	// others ignore them.
	AMD64 AMD64Options
	ARM64 ARM64Options

	// trapSlowPaths (tests only): the checked copy of a loop whose
	// checks are hoisted fails where it is entered, a hash update
	// answered inline fails where it would leave for Go, and the guard
	// of a budget loop fails where it would not run the loop's copy:
	// this shows whether a run took the fast paths.
	trapSlowPaths bool
}

// backend returns what the back end is asked for, with the blinding key
// (used if o.Blind) and tag of one program.
func (o *Options) backend(key uint64, tag uint32) backend.Options {
	return backend.Options{
		Checked:       !o.Unchecked,
		Blind:         o.Blind,
		Key:           key,
		Tag:           tag,
		TrapSlowPaths: o.trapSlowPaths,
		AMD64:         backend.AMD64Options(o.AMD64),
		ARM64:         backend.ARM64Options(o.ARM64),
	}
}

// AMD64Options tune the x86-64 back end.
type AMD64Options struct {
	// DisableBMI2 and DisableMOVBE make the compiler ignore those CPU
	// features, for tests and for comparing code paths.
	DisableBMI2  bool
	DisableMOVBE bool
}

// ARM64Options tune the arm64 back end.
type ARM64Options struct {
	// ForceLLSC makes the compiler use load/store-exclusive loops for
	// atomics even when the CPU has the LSE atomics.
	ForceLLSC bool
}
