package asm_test

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
)

func ExampleAssemble() {
	insns, err := asm.Assemble(`
		mov %r0, 0
		jeq %r1, 0, done     # nothing to count
		lock fetch add32 [%r10-4], %r1
	done:
		exit
	`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ins := range insns {
		fmt.Printf("% x\n", asm.Encode(nil, []asm.Instruction{ins}))
	}
	// Output:
	// b7 00 00 00 00 00 00 00
	// 15 01 01 00 00 00 00 00
	// c3 1a fc ff 01 00 00 00
	// 95 00 00 00 00 00 00 00
}

func ExampleDisassemble() {
	code := []byte{
		0x18, 0x01, 0, 0, 0x88, 0x77, 0x66, 0x55, // lddw %r1, 0x1122334455667788
		0x00, 0x00, 0, 0, 0x44, 0x33, 0x22, 0x11,
		0x55, 0x01, 0x01, 0x00, 0, 0, 0, 0, // jne %r1, 0, +1
		0x8f, 0, 0, 0, 0, 0, 0, 0, // not an instruction
		0x95, 0, 0, 0, 0, 0, 0, 0, // exit
	}
	insns, _ := asm.Decode(code)
	text, err := asm.Disassemble(insns)
	fmt.Print(text)
	fmt.Println("error:", err)
	// Output:
	// lddw %r1, 0x1122334455667788
	// jne %r1, 0, L4
	// .raw 0x000000000000008f # unknown opcode 0x8f
	// L4:
	// exit
	// error: slot 3 (0x000000000000008f): unknown opcode 0x8f
}

func ExampleFormat() {
	insns := asm.MustAssemble("ja end\nmov %r0, 1\nend:\nexit")
	fmt.Println(asm.Format(insns, 0))
	// Output: ja +1
}
