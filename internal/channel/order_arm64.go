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
