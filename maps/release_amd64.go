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
