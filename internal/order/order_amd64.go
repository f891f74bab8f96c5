//go:build amd64 && !race

package order

// StoreRelease32 stores v at p with release semantics: no earlier load
// or store passes it. A plain store on amd64, where an atomic store is an
// XCHG, a locked instruction.
//
//go:noescape
func StoreRelease32(p *uint32, v uint32)

// StoreRelease64 is StoreRelease32 for a uint64 (8-byte aligned).
//
//go:noescape
func StoreRelease64(p *uint64, v uint64)

// StoreOrdered64 stores v at p before any later store becomes visible
// (and, as a release, after every earlier one).
//
//go:noescape
func StoreOrdered64(p *uint64, v uint64)

// Publish stores n at a, then h at b, both as releases: a count and then
// the position that publishes what it counts, in one call.
//
//go:noescape
func Publish(a *uint64, n uint64, b *uint64, h uint64)

// LoadFence orders the loads before it before the loads after it: x86
// keeps loads in order, and the atomic load that follows it in a caller
// is a compiler barrier.
func LoadFence() {}

// AddOwned adds one to *p, which one writer at a time changes (the holder
// of a lock, a goroutine pinned to its P) and others load atomically: a
// plain add, since an aligned word is never torn. The race detector would
// report it, so race builds add atomically.
func AddOwned(p *uint64) uint64 { *p++; return *p }
