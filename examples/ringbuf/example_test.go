package ringbuf_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/maps"
)

// Request is struct request of ringbuf.bpf.c.
type Request struct {
	PID    uint32
	Status uint32
	Bytes  uint64
}

// Record is struct record of ringbuf.bpf.c.
type Record struct {
	PID    uint32
	Status uint32
	Bytes  uint64
	Seq    uint64
}

func Example() {
	coll, err := uebpf.LoadFile("ringbuf.bpf.o", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer coll.Close()
	rd, err := maps.NewReader(coll.Map("failures"))
	if err != nil {
		log.Fatal(err)
	}
	defer rd.Close()

	prog := coll.Program("report_failure")
	for _, req := range []Request{{1, 200, 10}, {2, 503, 20}, {3, 404, 30}, {4, 500, 40}} {
		if _, err := prog.RunPointer(unsafe.Pointer(&req), unsafe.Sizeof(req)); err != nil {
			log.Fatal(err)
		}
	}

	for rd.AvailableBytes() > 0 {
		raw, err := rd.Read()
		if err != nil {
			log.Fatal(err)
		}
		var rec Record
		if _, err := binary.Decode(raw.RawSample, binary.NativeEndian, &rec); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("#%d: pid %d status %d, %d bytes\n", rec.Seq, rec.PID, rec.Status, rec.Bytes)
	}
	// Output:
	// #0: pid 2 status 503, 20 bytes
	// #1: pid 4 status 500, 40 bytes
}
