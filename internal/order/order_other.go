//go:build (!amd64 && !arm64) || race

package order

import "sync/atomic"

// Sequentially consistent atomics where no cheaper ordering is written,
// and under the race detector, which sees atomics, not assembly.

func StoreRelease32(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

func StoreRelease64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

func StoreOrdered64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

func Publish(a *uint64, n uint64, b *uint64, h uint64) {
	atomic.StoreUint64(a, n)
	atomic.StoreUint64(b, h)
}

func LoadFence() {}

func AddOwned(p *uint64) uint64 { return atomic.AddUint64(p, 1) }
