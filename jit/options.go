package jit

// Options tune compilation. The zero value (or nil) compiles checked code
// with every CPU feature the machine has.
type Options struct {
	// Unchecked drops the memory checks from loads, stores and atomics.
	// Only for programs a verifier accepted: an unchecked program that
	// goes out of bounds corrupts or crashes the host process.
	Unchecked bool
	// Blind XORs every immediate of the program with a per-program random
	// key, so that attacker-chosen constants never appear verbatim in
	// executable memory (a defence against JIT spraying). It costs an
	// instruction or two per immediate.
	Blind bool
	// DisableBMI2 and DisableMOVBE make the compiler ignore those CPU
	// features, for tests and for comparing code paths.
	DisableBMI2  bool
	DisableMOVBE bool

	// trapSlowPaths (tests only): the checked copy of a loop whose
	// checks are hoisted fails where it is entered, and a hash update
	// answered inline fails where it would leave for Go: this shows
	// whether a run took the fast paths.
	trapSlowPaths bool
}
