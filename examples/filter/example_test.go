package filter_test

import (
	"fmt"
	"log"
	"unsafe"

	"github.com/uebpf/uebpf"
)

// Event is struct event of filter.bpf.c.
type Event struct {
	PID       uint32
	Syscall   uint32
	LatencyNs uint64
}

func Example() {
	coll, err := uebpf.LoadFile("filter.bpf.o", &uebpf.Options{
		Variables: map[string]any{"min_latency_ns": uint64(500)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer coll.Close()
	filter := coll.Program("count_slow")

	events := []Event{
		{PID: 1, LatencyNs: 100}, {PID: 1, LatencyNs: 900}, {PID: 2, LatencyNs: 700},
		{PID: 1, LatencyNs: 5000}, {PID: 3, LatencyNs: 20},
	}
	for i := range events {
		if _, err := filter.RunPointer(unsafe.Pointer(&events[i]), unsafe.Sizeof(events[i])); err != nil {
			log.Fatal(err)
		}
	}

	for _, pid := range []uint32{1, 2, 3} {
		var n uint64
		if err := coll.Map("slow_calls").Lookup(pid, &n); err != nil {
			n = 0 // no slow call
		}
		fmt.Printf("pid %d: %d slow calls\n", pid, n)
	}
	// Output:
	// pid 1: 2 slow calls
	// pid 2: 1 slow calls
	// pid 3: 0 slow calls
}
