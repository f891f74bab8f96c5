package vm_test

import (
	"errors"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

func TestValidation(t *testing.T) {
	exit := asm.Instruction{Opcode: asm.OpExit}
	mov := func(dst uint8) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceK, Dst: dst}
	}
	cases := []struct {
		name  string
		insns []asm.Instruction
		want  error
		index int
	}{
		{"empty", nil, vm.ErrEmptyProgram, 0},
		{"unknown opcode", []asm.Instruction{{Opcode: 0xff}, exit}, vm.ErrUnknownOpcode, 0},
		{"unknown ALU op", []asm.Instruction{{Opcode: asm.ClassALU64 | 0xe0}, exit}, vm.ErrUnknownOpcode, 0},
		{"register 11", []asm.Instruction{mov(11), exit}, vm.ErrInvalidRegister, 0},
		{"write to r10", []asm.Instruction{mov(10), exit}, vm.ErrWriteToR10, 0},
		{"lddw into r10", []asm.Instruction{{Opcode: asm.OpLDDW, Dst: 10}, {}, exit}, vm.ErrWriteToR10, 0},
		{"load into r10", []asm.Instruction{{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeDW, Dst: 10, Src: 1}, exit}, vm.ErrWriteToR10, 0},
		{"atomic fetch into r10", []asm.Instruction{{Opcode: asm.ClassSTX | asm.ModeATOMIC | asm.SizeDW, Dst: 1, Src: 10, Imm: asm.AtomicADD | asm.AtomicFetch}, exit}, vm.ErrWriteToR10, 0},
		{"bad atomic op", []asm.Instruction{{Opcode: asm.ClassSTX | asm.ModeATOMIC | asm.SizeDW, Dst: 1, Src: 2, Imm: 0x99}, exit}, vm.ErrUnknownOpcode, 0},
		{"atomic byte", []asm.Instruction{{Opcode: asm.ClassSTX | asm.ModeATOMIC | asm.SizeB, Dst: 1, Src: 2}, exit}, vm.ErrUnknownOpcode, 0},
		{"jump past the end", []asm.Instruction{{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 5}, exit}, vm.ErrJumpOutOfRange, 0},
		{"jump before the start", []asm.Instruction{mov(0), {Opcode: asm.ClassJMP | asm.JmpJEQ, Offset: -3}, exit}, vm.ErrJumpOutOfRange, 1},
		{"call outside", []asm.Instruction{{Opcode: asm.OpCall, Src: asm.PseudoCall, Imm: 10}, exit}, vm.ErrJumpOutOfRange, 0},
		{"jump into lddw", []asm.Instruction{{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 1}, {Opcode: asm.OpLDDW}, {}, exit}, vm.ErrJumpIntoLDDW, 0},
		{"incomplete lddw", []asm.Instruction{exit, {Opcode: asm.OpLDDW}}, vm.ErrIncompleteLDDW, 1},
		{"lddw second slot with opcode", []asm.Instruction{{Opcode: asm.OpLDDW}, exit, exit}, vm.ErrIncompleteLDDW, 0},
		{"falls off the end", []asm.Instruction{mov(0)}, vm.ErrFallsOffEnd, 0},
		{"conditional jump last", []asm.Instruction{mov(0), {Opcode: asm.ClassJMP | asm.JmpJEQ, Offset: -2}}, vm.ErrFallsOffEnd, 1},
		{"missing helper", []asm.Instruction{{Opcode: asm.OpCall, Imm: 1}, exit}, vm.ErrHelperMissing, 0},
		{"kfunc", []asm.Instruction{{Opcode: asm.OpCall, Src: asm.PseudoKfuncCall, Imm: 1}, exit}, vm.ErrUnsupported, 0},
		{"unresolved map", []asm.Instruction{{Opcode: asm.OpLDDW, Src: asm.PseudoMapFD, Dst: 1}, {}, exit}, vm.ErrUnresolvedMap, 0},
		{"bad byte swap width", []asm.Instruction{{Opcode: asm.ClassALU | asm.AluEND, Imm: 8}, exit}, vm.ErrInvalidField, 0},
		{"bad movsx offset", []asm.Instruction{{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Offset: 4}, exit}, vm.ErrInvalidField, 0},
		{"offset on add", []asm.Instruction{{Opcode: asm.ClassALU64 | asm.AluADD, Offset: 1}, exit}, vm.ErrInvalidField, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := vm.Load(&vm.ProgramSpec{Name: "p", Instructions: tc.insns}, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var le *vm.LoadError
			if !errors.As(err, &le) || le.Index != tc.index || le.Program != "p" {
				t.Fatalf("err = %#v, want instruction %d of program p", err, tc.index)
			}
		})
	}
}

func TestLoadBytes(t *testing.T) {
	if _, err := vm.LoadBytes("odd", make([]byte, 12), nil); err == nil {
		t.Fatal("12 bytes of bytecode loaded")
	}
	code := asm.Encode(nil, asm.MustAssemble("mov %r0, 3\nexit"))
	p, err := vm.LoadBytes("three", code, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r0, err := p.Run(nil); err != nil || r0 != 3 {
		t.Fatalf("r0 = %d, %v", r0, err)
	}
}
