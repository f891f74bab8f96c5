package asm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
)

func TestDisassembleLabels(t *testing.T) {
	src := `
mov %r0, 0
jeq %r1, 0x10000, skip   # big immediates print in hex
lddw %r2, 0x1122334455667788
call local fn
skip:
ja +0
exit
fn:
mov32 %r0, -1
exit
`
	want := `mov %r0, 0
jeq %r1, 0x10000, L5
lddw %r2, 0x1122334455667788
call local L7
L5:
ja L6
L6:
exit
L7:
mov32 %r0, -1
exit
`
	insns := asm.MustAssemble(src)
	got, err := asm.Disassemble(insns)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Disassemble:\n%s\nwant:\n%s", got, want)
	}
	requireRoundTrip(t, insns)
}

func TestDisassembleOffsetsWhereNoLabelFits(t *testing.T) {
	insns := []asm.Instruction{
		{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 1}, // into the middle of the lddw
		asm.LDDW(1, 5)[0], asm.LDDW(1, 5)[1],
		{Opcode: asm.ClassJMP | asm.JmpJA, Offset: -10}, // before the program
		{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 100}, // after it
		{Opcode: asm.OpExit},
	}
	text, err := asm.Disassemble(insns)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ja +1\n", "ja -10\n", "ja +100\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	requireRoundTrip(t, insns)
}

func TestDisassembleInvalidSlots(t *testing.T) {
	lddw := asm.LDDW(1, 0x1_0000_0002)
	tests := []struct {
		name   string
		insns  []asm.Instruction
		slot   int
		reason string
	}{
		{"unknown opcode", []asm.Instruction{{Opcode: 0x8f}}, 0, "unknown opcode 0x8f"},
		{"unknown ALU op", []asm.Instruction{{Opcode: 0xe7}}, 0, "unknown opcode 0xe7"},
		{"lone zero slot", []asm.Instruction{{}}, 0, "unknown opcode 0x00"},
		{"src set on imm form", []asm.Instruction{{Opcode: 0xb7, Src: 3}}, 0, "src is 3, must be 0"},
		{"imm set on reg form", []asm.Instruction{{Opcode: 0xbf, Imm: 1}}, 0, "imm is 1, must be 0"},
		{"div offset", []asm.Instruction{{Opcode: 0x34, Offset: 2}}, 0, "offset is 2, must be 0 or 1"},
		{"movsx offset", []asm.Instruction{{Opcode: 0xbc, Offset: 32}}, 0, "offset is 32, must be 0 or 8 or 16"},
		{"bswap width", []asm.Instruction{{Opcode: 0xd7, Imm: 17}}, 0, "imm is 17, must be 16 or 32 or 64"},
		{"atomic op", []asm.Instruction{{Opcode: 0xdb, Imm: 0x10}}, 0, "imm is 16, must be"},
		{"exit with imm", []asm.Instruction{{Opcode: 0x95, Imm: 1}}, 0, "imm is 1, must be 0"},
		{"dst above r10", []asm.Instruction{{Opcode: 0xb7, Dst: 11}}, 0, "dst register r11 does not exist"},
		{"src above r10", []asm.Instruction{{Opcode: 0xbf, Src: 15}}, 0, "src register r15 does not exist"},
		{"unknown lddw kind", []asm.Instruction{{Opcode: 0x18, Src: 7}, {}}, 0, "src is 7"},
		{"lddw cut short", []asm.Instruction{{Opcode: asm.OpExit}, lddw[0]}, 1, "lddw without its second slot"},
		{"lddw second slot used", []asm.Instruction{lddw[0], {Opcode: 0, Dst: 1}}, 0, "not a second half"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := asm.Disassemble(tt.insns)
			var se *asm.SlotError
			if !errors.As(err, &se) {
				t.Fatalf("Disassemble error = %v, want a *SlotError", err)
			}
			if se.Slot != tt.slot || !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("SlotError{Slot: %d, Reason: %q}, want slot %d and reason containing %q", se.Slot, se.Reason, tt.slot, tt.reason)
			}
			if !strings.Contains(text, ".raw 0x") || !strings.Contains(text, tt.reason) {
				t.Errorf("text does not show the slot as .raw with its reason:\n%s", text)
			}
			requireRoundTrip(t, tt.insns)
		})
	}
}

func TestFormat(t *testing.T) {
	insns := asm.MustAssemble(`
jne %r1, %r2, +2
lddw %r0, -5
ja -4
.raw 0x0000000000000007
stxw [%r10-4], %r1
.raw 0x8f
`)
	tests := []struct {
		slot int
		want string
	}{
		{0, "jne %r1, %r2, +2"},
		{1, "lddw %r0, -5"},
		{2, ".raw 0xffffffff00000000 # second slot of the lddw at slot 1"},
		{3, "ja -4"},
		{4, "add %r0, 0"},
		{5, "stxw [%r10-4], %r1"},
		{6, ".raw 0x000000000000008f # unknown opcode 0x8f"},
		{-1, ".error slot -1 is outside the program (7 slots)"},
		{7, ".error slot 7 is outside the program (7 slots)"},
	}
	for _, tt := range tests {
		if got := asm.Format(insns, tt.slot); got != tt.want {
			t.Errorf("Format(slot %d) = %q, want %q", tt.slot, got, tt.want)
		}
	}
	if got := asm.Format(nil, 0); !strings.HasPrefix(got, ".error") {
		t.Errorf("Format(nil, 0) = %q, want an .error line", got)
	}
}

func TestDisassembleConstructedFieldsTooWide(t *testing.T) {
	// Instructions built in Go can hold register numbers the encoding
	// cannot; they must be reported, not silently truncated.
	_, err := asm.Disassemble([]asm.Instruction{{Opcode: asm.OpExit, Dst: 16}})
	var se *asm.SlotError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "do not fit in 4 bits") {
		t.Fatalf("Disassemble error = %v, want a SlotError about 4-bit fields", err)
	}
}
