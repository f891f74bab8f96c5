package redteam

// callPoisoned calls f(ctx) as Go would, in the internal register ABI,
// with garbage in every other register it may (rdx holds the closure),
// so that a direct entry that relies on a register it did not set shows:
// a Go caller happens to leave useful values in them. The garbage is
// chosen: an address a hostile program guesses, say.
//
//go:noescape
func callPoisoned(f func([]byte) (uint64, error), ctx []byte, garbage uintptr) (r0 uint64, err error)
