package vm_test

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// A program sums the bytes of its context; r1 is the context and r2 its
// length.
func Example() {
	insns, err := asm.Assemble(`
		mov %r0, 0
		add %r2, %r1
	loop:
		jge %r1, %r2, done
		ldxb %r3, [%r1]
		add %r0, %r3
		add %r1, 1
		ja loop
	done:
		exit`)
	if err != nil {
		panic(err)
	}
	prog, err := vm.Load(&vm.ProgramSpec{Name: "sum", Instructions: insns}, nil)
	if err != nil {
		panic(err)
	}
	sum, err := prog.Run([]byte{1, 2, 3, 4})
	fmt.Println(sum, err)
	// Output: 10 <nil>
}

// Helpers are Go functions registered by number.
func ExampleHelpers() {
	helpers := vm.Helpers{100: {Name: "double", Func: func(env *vm.Env, r1, _, _, _, _ uint64) uint64 {
		return 2 * r1
	}}}
	prog, err := vm.Load(&vm.ProgramSpec{Instructions: asm.MustAssemble("mov %r1, 21\ncall 100\nexit")},
		&vm.Options{Helpers: helpers})
	if err != nil {
		panic(err)
	}
	fmt.Println(prog.Run(nil))
	// Output: 42 <nil>
}

// Memory outside the program's regions is refused with an error naming
// the instruction and the address, in place of a crash.
func ExampleRunError() {
	prog, err := vm.Load(&vm.ProgramSpec{Instructions: asm.MustAssemble("mov %r1, 0\nldxdw %r0, [%r1+16]\nexit")}, nil)
	if err != nil {
		panic(err)
	}
	_, err = prog.Run(nil)
	fmt.Println(err)
	// Output: pc 1: 8-byte access at 0x10: memory access outside the program's regions
}

// An Env reused across runs avoids the pool and costs nothing per run.
func ExampleEnv() {
	prog, err := vm.Load(&vm.ProgramSpec{Instructions: asm.MustAssemble("ldxw %r0, [%r1]\nexit")}, nil)
	if err != nil {
		panic(err)
	}
	env := vm.NewEnv()
	ctx := []byte{7, 0, 0, 0}
	env.SetContext(ctx)
	for i := range 3 {
		ctx[0] = byte(i)
		r0, _ := prog.Exec(env)
		fmt.Print(r0, " ")
	}
	// Output: 0 1 2
}
