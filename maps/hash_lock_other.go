//go:build !amd64 || race

package maps

import "sync/atomic"

// storeRelease stores v at p with release semantics (see the amd64
// version).
func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
