//go:build arm64 && !race

package order

import "sync/atomic"

// StoreRelease32 stores v at p with release semantics (STLR).
func StoreRelease32(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

// StoreRelease64 is StoreRelease32 for a uint64.
func StoreRelease64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

// StoreOrdered64 stores v at p before any later store becomes visible: a
// release store orders only what comes before it, so a store barrier
// follows (STLR; DMB ISHST).
//
//go:noescape
func StoreOrdered64(p *uint64, v uint64)

// Publish stores n at a, then h at b, both as releases.
func Publish(a *uint64, n uint64, b *uint64, h uint64) {
	atomic.StoreUint64(a, n)
	atomic.StoreUint64(b, h)
}

// LoadFence orders the loads before it before the loads after it
// (DMB ISHLD).
func LoadFence()

// AddOwned adds one to *p, which one writer at a time changes and others
// load atomically: a plain add.
func AddOwned(p *uint64) uint64 { *p++; return *p }
