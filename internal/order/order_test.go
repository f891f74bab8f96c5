package order

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestPublish: a reader that sees the position a writer published sees
// what it published with it, across goroutines (run with -race too).
func TestPublish(t *testing.T) {
	var data [64]uint64
	var count, head uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := uint64(1); i <= 100000; i++ {
			StoreRelease64(&data[i%64], i)
			Publish(&count, i, &head, i)
		}
	})
	wg.Go(func() {
		for {
			h := loadAtomic(&head)
			if h == 0 {
				continue
			}
			LoadFence()
			if n := loadAtomic(&count); n < h {
				t.Errorf("count %d behind head %d", n, h)
				return
			}
			if h == 100000 {
				return
			}
		}
	})
	wg.Wait()
	var n uint64
	for range 10 {
		AddOwned(&n)
	}
	var x uint32
	StoreRelease32(&x, 7)
	var y uint64
	StoreOrdered64(&y, 9)
	if n != 10 || x != 7 || y != 9 {
		t.Errorf("%d %d %d", n, x, y)
	}
}
func loadAtomic(p *uint64) uint64 { return atomic.LoadUint64(p) }
