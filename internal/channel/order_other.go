//go:build (!amd64 && !arm64) || (amd64 && race)

package channel

import "sync/atomic"

// Sequentially consistent atomics where no cheaper ordering is written
// (and under the race detector, which sees atomics, not assembly).

func storeRelease64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

func storeOrdered64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

func loadFence() {}

// publish stores the ring's record count, then its head: a record's
// commit.
func publish(records *uint64, n uint64, head *uint64, h uint64) {
	atomic.StoreUint64(records, n)
	atomic.StoreUint64(head, h)
}
