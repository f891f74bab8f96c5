// Command demo is uebpf's main demo. It loads the clang-built filter of
// examples/filter (committed, so no clang is needed), times real system
// calls made by a few workers, feeds each call to the filter as an event,
// and prints what the filter counted in its hash map — once on the
// interpreter and once on the JIT (where the JIT exists), with the cost of
// one filter run on each. Last, it shows the verifier refusing the filter
// when told its context is too small for what it reads.
//
//	go run ./examples/demo
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/examples/filter"
	"github.com/uebpf/uebpf/jit"
)

// event is struct event of filter.bpf.c.
type event struct {
	PID       uint32 // here: the worker
	Syscall   uint32
	LatencyNs uint64
}

const threshold = 500 * time.Microsecond

func main() {
	events := workload()
	fmt.Printf("timed %d system calls from 3 workers (only workers 1 and 2 sleep);\nthe filter counts those slower than %v\n\n", len(events), threshold)
	engines := []uebpf.Engine{uebpf.EngineInterpreter}
	if jit.Supported {
		engines = append(engines, uebpf.EngineJIT)
	}
	for _, engine := range engines {
		if err := runFilter(engine, events); err != nil {
			log.Fatalf("%v: %v", engine, err)
		}
	}
	showRefusal()
}

// showRefusal loads the same filter claiming its context is 4 bytes: the
// verifier refuses it, since the program reads latency_ns at offset 8, and
// says where and why.
func showRefusal() {
	_, err := uebpf.Load(bytes.NewReader(filter.Object), &uebpf.Options{ContextSize: 4})
	if err == nil {
		log.Fatal("the verifier accepted the filter for a 4-byte context")
	}
	fmt.Printf("the same filter, declared with a 4-byte context, does not load:\n%v\n", err)
}

// workload makes real system calls and times each one: fast getpid and
// stat calls, and a few sleeps.
func workload() []event {
	var events []event
	timed := func(worker, nr uint32, call func()) {
		start := time.Now()
		call()
		events = append(events, event{PID: worker, Syscall: nr, LatencyNs: uint64(time.Since(start).Nanoseconds())})
	}
	for i := range 300 {
		worker := uint32(i%3 + 1)
		timed(worker, sysGetpid, func() { unix.Getpid() })
		timed(worker, sysNewfstatat, func() { os.Stat("/") })
		if worker != 3 && i%50 < 6 { // workers 1 and 2 sleep now and then, worker 3 never does
			timed(worker, sysNanosleep, func() { time.Sleep(2 * time.Millisecond) })
		}
	}
	return events
}

func runFilter(engine uebpf.Engine, events []event) error {
	coll, err := uebpf.Load(bytes.NewReader(filter.Object), &uebpf.Options{
		Engine:    engine,
		Variables: map[string]any{"min_latency_ns": uint64(threshold.Nanoseconds())},
	})
	if err != nil {
		return err
	}
	defer coll.Close()
	prog := coll.Program("count_slow")

	start := time.Now()
	for i := range events {
		if _, err := prog.RunPointer(unsafe.Pointer(&events[i]), unsafe.Sizeof(events[i])); err != nil {
			return err
		}
	}
	perRun := time.Since(start) / time.Duration(len(events))

	mode := "checked at run time"
	if prog.Verified() {
		mode = fmt.Sprintf("verified at load for a %d-byte context", prog.ContextSize())
	}
	fmt.Printf("engine %-11s  %v per filter run, %s\n", prog.Engine(), perRun, mode)
	var workers []uint32
	var key uint32
	var count uint64
	for it := coll.Map("slow_calls").Iterate(); it.Next(&key, &count); {
		workers = append(workers, key)
	}
	slices.Sort(workers)
	for _, w := range workers {
		coll.Map("slow_calls").Lookup(w, &count)
		fmt.Printf("  worker %d: %d slow calls\n", w, count)
	}
	fmt.Println()
	return nil
}
