package ringbuf_test

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/maps"
)

// Producers on several goroutines, one consumer: every record arrives once.
func TestProducersConsumer(t *testing.T) {
	coll, err := uebpf.LoadFile("ringbuf.bpf.o", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	rd, err := maps.NewReader(coll.Map("failures"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	prog := coll.Program("report_failure")

	const producers, each = 4, 200
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := Request{PID: uint32(p), Status: 500}
			for range each {
				for {
					r0, err := prog.RunPointer(unsafe.Pointer(&req), unsafe.Sizeof(req))
					if err != nil {
						t.Error(err)
						return
					}
					if r0 == 1 {
						break
					}
					time.Sleep(time.Millisecond) // ring full: let the consumer catch up
				}
			}
		}()
	}
	seen := make(map[uint64]bool)
	rd.SetDeadline(time.Now().Add(10 * time.Second))
	for len(seen) < producers*each {
		rec, err := rd.Read()
		if err != nil {
			t.Fatalf("after %d records: %v", len(seen), err)
		}
		seq := *(*uint64)(unsafe.Pointer(&rec.RawSample[16]))
		if seen[seq] {
			t.Fatalf("record %d twice", seq)
		}
		seen[seq] = true
	}
	wg.Wait()
}
