package vm

// SetInterpretSlice sets the interpreter's slice of the budget and returns
// a function that restores it.
func SetInterpretSlice(n uint64) (restore func()) {
	old := interpretSlice
	interpretSlice = n
	return func() { interpretSlice = old }
}

// GCEpoch is the number of garbage collections the lean caches have seen.
func GCEpoch() uint32 { return gcEpoch.Load() }

// Lean reports whether Run takes the lean path for p.
func (p *Program) Lean() bool { return p.lean }

// LeanChunk is the budget a lean run interprets pinned to its P.
const LeanChunk = leanChunk
