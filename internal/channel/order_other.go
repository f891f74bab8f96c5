//go:build (!amd64 && !arm64) || (amd64 && race)

package channel

import "sync/atomic"

// Sequentially consistent atomics where no cheaper ordering is written
// (and under the race detector, which sees atomics, not assembly).

func storeRelease64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

func storeOrdered64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

func loadFence() {}
