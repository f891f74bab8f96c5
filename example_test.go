package uebpf_test

import (
	"fmt"
	"log"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/vm"
)

// Event is the context of examples/filter/filter.bpf.c.
type Event struct {
	PID       uint32
	Syscall   uint32
	LatencyNs uint64
}

// Load a clang-built object, set a constant, run a program on Go events and
// read the map it fills.
func Example() {
	coll, err := uebpf.LoadFile("examples/filter/filter.bpf.o", &uebpf.Options{
		Variables: map[string]any{"min_latency_ns": uint64(1000)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer coll.Close()

	prog := coll.Program("count_slow")
	for _, ev := range []Event{{PID: 42, LatencyNs: 5000}, {PID: 42, LatencyNs: 10}, {PID: 42, LatencyNs: 1500}} {
		if _, err := prog.RunPointer(unsafe.Pointer(&ev), unsafe.Sizeof(ev)); err != nil {
			log.Fatal(err)
		}
	}
	var n uint64
	if err := coll.Map("slow_calls").Lookup(uint32(42), &n); err != nil {
		log.Fatal(err)
	}
	fmt.Println("slow calls of pid 42:", n)
	// Output: slow calls of pid 42: 2
}

// Give programs an application helper: add it to the standard set with
// helpers.Register, as for vm.Load.
func ExampleOptions_helpers() {
	config := map[uint32]uint64{1: 100, 2: 200}
	set := helpers.Standard(nil)
	err := helpers.Register(set, helpers.FirstApplicationHelper, "app_config",
		func(_ *vm.Env, key, _, _, _, _ uint64) uint64 { return config[uint32(key)] },
		// The verifier checks calls against the prototype.
		&vm.Prototype{Args: [5]vm.ArgKind{vm.ArgScalar}, Ret: vm.RetInteger})
	if err != nil {
		log.Fatal(err)
	}
	coll, err := uebpf.LoadFile("testdata/apphelper.bpf.o", &uebpf.Options{Helpers: set})
	if err != nil {
		log.Fatal(err)
	}
	defer coll.Close()
	r0, err := coll.Program("read_config").Run([]byte{2, 0, 0, 0})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r0)
	// Output: 201
}
