//go:build arm64

package channel

import "sync/atomic"

// storeRelease64 stores v at p with release semantics (STLR).
func storeRelease64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

// storeOrdered64 stores v at p before any later store becomes visible: a
// release store orders only what comes before it, so a store barrier
// follows.
//
//go:noescape
func storeOrdered64(p *uint64, v uint64)

// loadFence orders the loads before it before the loads after it.
func loadFence()

// publish stores the ring's record count, then its head: a record's
// commit.
func publish(records *uint64, n uint64, head *uint64, h uint64) {
	atomic.StoreUint64(records, n)
	atomic.StoreUint64(head, h)
}
