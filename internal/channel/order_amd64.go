//go:build amd64 && !race

package channel

// storeRelease64 stores v at p with release semantics: on amd64 a plain
// store, which is not reordered with earlier loads and stores. It is
// assembly so that the compiler keeps the record's stores before it; an
// atomic store would be an XCHG, a locked instruction per record.
//
//go:noescape
func storeRelease64(p *uint64, v uint64)

// storeOrdered64 stores v at p before any later store becomes visible
// (x86 keeps stores in order).
//
//go:noescape
func storeOrdered64(p *uint64, v uint64)

// loadFence orders the loads before it before the loads after it: x86
// keeps loads in order, and the atomic load that follows it is a compiler
// barrier.
func loadFence() {}

// publish stores the ring's record count, then its head: a record's
// commit, two plain stores in one call.
//
//go:noescape
func publish(records *uint64, n uint64, head *uint64, h uint64)
