package elf_test

import (
	"fmt"
	"log"

	"github.com/uebpf/uebpf/elf"
)

// Load an object, run one of its userspace programs and list the kernel
// programs kept for the kernel bridge.
func Example() {
	coll, err := elf.Load("testdata/loader.bpf.o", &elf.Options{
		Helpers:   testHelpers(), // usually helpers.Standard(nil)
		Variables: map[string]any{"threshold": uint64(4)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer coll.Close()

	r0, err := coll.Program("globals").VM.Run(ctx(5, 0))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("globals(5) with threshold 4:", r0)
	for _, name := range []string{"kernel_openat", "kernel_xdp"} {
		fmt.Println("kernel:", name, coll.KernelSpec.Programs[name].SectionName)
	}
	// Output:
	// globals(5) with threshold 4: 1
	// kernel: kernel_openat tracepoint/syscalls/sys_enter_openat
	// kernel: kernel_xdp xdp
}
