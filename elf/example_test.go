package elf_test

import (
	"fmt"
	"log"

	"github.com/uebpf/uebpf/asm"
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

// List a program as clang wrote it, with its C source lines and the maps
// it refers to, without loading anything (what uebpf disasm prints).
func ExampleNewListing() {
	spec, err := elf.LoadSpec("../examples/tailcall/tailcall.bpf.o")
	if err != nil {
		log.Fatal(err)
	}
	l, err := elf.NewListing(spec.Programs["dispatch"])
	if err != nil {
		log.Fatal(err)
	}
	for pc := range l.Instructions {
		if pc > 0 && l.Instructions[pc-1].IsLDDW() {
			continue // an lddw's second slot
		}
		fmt.Printf("%d: %-30s %-9s %s\n", pc, asm.Format(l.Instructions, pc), l.References[pc], l.SourceLine(pc))
	}
	// Output:
	// 0: ldxw %r3, [%r1]                          tailcall.bpf.c:32: bpf_tail_call(o, &handlers, o->code);
	// 1: lddw %r2, map_by_fd(0)         handlers  tailcall.bpf.c:32: bpf_tail_call(o, &handlers, o->code);
	// 3: call 12                                  tailcall.bpf.c:32: bpf_tail_call(o, &handlers, o->code);
	// 4: mov %r0, -1                              tailcall.bpf.c:33: return -1; // no handler for this code
	// 5: exit                                     tailcall.bpf.c:33: return -1; // no handler for this code
}
