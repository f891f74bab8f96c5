package helpers_test

import (
	"fmt"
	"os"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// A program counting its runs in a hash map and printing the count with
// bpf_trace_printk.
func ExampleStandard() {
	counts, err := maps.New(&maps.Spec{Name: "counts", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		panic(err)
	}
	insns, err := asm.Assemble(`
		stw [%r10-4], 0              # key 0
		stdw [%r10-16], 1            # value 1
		lddw %r1, map_by_fd(0)
		mov %r2, %r10
		add %r2, -4
		call 1                       # bpf_map_lookup_elem
		jne %r0, 0, found
		lddw %r1, map_by_fd(0)
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 0
		call 2                       # bpf_map_update_elem
		mov %r3, 1
		ja print
	found:
		mov %r1, 1
		lock fetch add [%r0], %r1
		add %r1, 1
		mov %r3, %r1
	print:
		lddw %r1, 0x000a64253d6e       # "n=%d\n"
		stxdw [%r10-24], %r1
		mov %r1, %r10
		add %r1, -24
		mov %r2, 6
		call 6                       # bpf_trace_printk
		mov %r0, 0
		exit`)
	if err != nil {
		panic(err)
	}
	set := helpers.Standard(&helpers.Config{Output: os.Stdout})
	prog, err := vm.Load(&vm.ProgramSpec{Name: "count", Instructions: insns, Maps: []vm.Map{counts}}, &vm.Options{Helpers: set})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := prog.Run(nil); err != nil {
			panic(err)
		}
	}
	// Output:
	// n=1
	// n=2
	// n=3
}

// An application helper: the program calls it by its number.
func ExampleRegister() {
	set := helpers.Standard(nil)
	add := func(_ *vm.Env, r1, r2, _, _, _ uint64) uint64 { return r1 + r2 }
	proto := &vm.Prototype{Args: [5]vm.ArgKind{vm.ArgScalar, vm.ArgScalar}, Ret: vm.RetInteger, RetSizeArg: -1}
	if err := helpers.Register(set, helpers.FirstApplicationHelper, "app_add", add, proto); err != nil {
		panic(err)
	}
	insns, err := asm.Assemble(`
		mov %r1, 40
		mov %r2, 2
		call 0x10000
		exit`)
	if err != nil {
		panic(err)
	}
	prog, err := vm.Load(&vm.ProgramSpec{Name: "add", Instructions: insns}, &vm.Options{Helpers: set})
	if err != nil {
		panic(err)
	}
	r0, err := prog.Run(nil)
	fmt.Println(r0, err)

	// A number already taken is refused.
	fmt.Println(helpers.Register(set, helpers.KtimeGetNs, "mine", add, proto))
	// Output:
	// 42 <nil>
	// helper 5 (mine): taken by ktime_get_ns: helper number already registered
}
