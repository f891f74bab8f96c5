package vm_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

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

// Bound a run of an unverified program by time and by a context: the
// loop below never ends, and the run stops with an error instead.
func ExampleProgram_RunContext() {
	// for (;;) {} as raw bytecode: ja -1; exit.
	code := []byte{
		0x05, 0, 0xff, 0xff, 0, 0, 0, 0,
		0x95, 0, 0, 0, 0, 0, 0, 0,
	}
	p, err := vm.LoadBytes("spin", code, &vm.Options{Timeout: 50 * time.Millisecond, Budget: 1 << 62})
	if err != nil {
		log.Fatal(err)
	}
	_, err = p.Run(nil)
	fmt.Println(errors.Is(err, vm.ErrTimeout))

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	_, err = p.RunContext(ctx, nil)
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// true
	// true
}
