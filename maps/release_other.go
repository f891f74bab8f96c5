//go:build !amd64 || race

package maps

import "sync/atomic"

// storeRelease stores v at p with release semantics (see the amd64
// version).
func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

// addLocked adds one to *p, which only holders of one lock change (see
// the amd64 version).
func addLocked(p *uint64) { atomic.AddUint64(p, 1) }

// storeRelease64 is storeRelease for a uint64.
func storeRelease64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
