//go:build amd64 && !race

package maps

// storeRelease stores v at p with release semantics: on amd64 a plain
// store, which is not reordered with earlier loads and stores. It is
// written in assembly so that the Go compiler cannot move the critical
// section's memory accesses past it either. The race detector does not see
// assembly, so race builds use an atomic store instead.
//
//go:noescape
func storeRelease(p *uint32, v uint32)

// storeRelease64 is storeRelease for a uint64 (8-byte aligned).
//
//go:noescape
func storeRelease64(p *uint64, v uint64)

// addLocked adds one to *p, which only holders of one lock change and
// others read with atomic loads: on amd64 a plain add in place, no locked
// instruction. Readers see the old value or the new one: an aligned
// 8-byte store is atomic here, and Go's memory model has racy word-sized
// reads observe a value written. The race detector would report the
// plain add, so race builds add atomically.
func addLocked(p *uint64) { *p++ }
