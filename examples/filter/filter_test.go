package filter_test

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf"
)

// Concurrent runs lose no count: the program adds with an atomic.
func TestConcurrentCounts(t *testing.T) {
	coll, err := uebpf.LoadFile("filter.bpf.o", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	p := coll.Program("count_slow")
	const goroutines, runs = 8, 500
	// The first event creates the element; the rest add to it.
	first := Event{PID: 7, LatencyNs: 2e6}
	if _, err := p.RunPointer(unsafe.Pointer(&first), unsafe.Sizeof(first)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := Event{PID: 7, LatencyNs: 2e6}
			for range runs {
				if _, err := p.RunPointer(unsafe.Pointer(&ev), unsafe.Sizeof(ev)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var n uint64
	if err := coll.Map("slow_calls").Lookup(uint32(7), &n); err != nil || n != goroutines*runs+1 {
		t.Errorf("count = %d, %v; want %d", n, err, goroutines*runs+1)
	}
}
