package asm_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
)

// Expected bytes come from the ISA (RFC 9669): opcode, dst|src<<4, offset
// (le16), imm (le32).
func TestAssembleEncodings(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		// Atomics.
		{"fetch add32", "lock fetch add32 [%r10-4], %r1", "c3 1a fc ff 01 00 00 00"},
		{"add64 zero offset", "lock add [%r1+0], %r2", "db 21 00 00 00 00 00 00"},
		{"or32 bare base", "lock or32 [%r1], %r2", "c3 21 00 00 40 00 00 00"},
		{"fetch and", "lock fetch and [%r1-2], %r0", "db 01 fe ff 51 00 00 00"},
		{"fetch xor", "lock fetch xor [%r2+16], %r3", "db 32 10 00 a1 00 00 00"},
		{"xchg32", "lock xchg32 [%r10-8], %r1", "c3 1a f8 ff e1 00 00 00"},
		{"cmpxchg", "lock cmpxchg [%r10-8], %r1", "db 1a f8 ff f1 00 00 00"},
		{"fetch xchg alias", "lock fetch xchg [%r10-8], %r1", "db 1a f8 ff e1 00 00 00"},
		// Immediates: negative, and 32-bit two's complement written unsigned.
		{"mov -1", "mov %r1, -1", "b7 01 00 00 ff ff ff ff"},
		{"mov32 0xffffffff", "mov32 %r1, 0xffffffff", "b4 01 00 00 ff ff ff ff"},
		{"lsh negative", "lsh %r0, -60", "67 00 00 00 c4 ff ff ff"},
		{"min int32", "mov %r0, -2147483648", "b7 00 00 00 00 00 00 80"},
		{"uppercase hex", "mov %r0, 0XFF", "b7 00 00 00 ff 00 00 00"},
		{"leading zero is decimal", "mov %r0, 010", "b7 00 00 00 0a 00 00 00"},
		{"reg forms", "add32 %r0, %r1", "0c 10 00 00 00 00 00 00"},
		{"neg", "neg %r1", "87 01 00 00 00 00 00 00"},
		{"neg32", "neg32 %r1", "84 01 00 00 00 00 00 00"},
		// ISA v4: signed division, sign-extending moves and loads, bswap.
		{"sdiv32 imm", "sdiv32 %r0, -4", "34 00 01 00 fc ff ff ff"},
		{"sdiv reg", "sdiv %r0, %r1", "3f 10 01 00 00 00 00 00"},
		{"smod reg", "smod %r0, %r1", "9f 10 01 00 00 00 00 00"},
		{"smod32 imm", "smod32 %r0, 3", "94 00 01 00 03 00 00 00"},
		{"movsx832", "movsx832 %r0, %r1", "bc 10 08 00 00 00 00 00"},
		{"movsx1632", "movsx1632 %r4, %r3", "bc 34 10 00 00 00 00 00"},
		{"movsx864", "movsx864 %r6, %r5", "bf 56 08 00 00 00 00 00"},
		{"movsx1664", "movsx1664 %r8, %r7", "bf 78 10 00 00 00 00 00"},
		{"movsx3264", "movsx3264 %r0, %r9", "bf 90 20 00 00 00 00 00"},
		{"ldxsb", "ldxsb %r0, [%r10-1]", "91 a0 ff ff 00 00 00 00"},
		{"ldxsh", "ldxsh %r0, [%r1+2]", "89 10 02 00 00 00 00 00"},
		{"ldxsw", "ldxsw %r0, [%r1]", "81 10 00 00 00 00 00 00"},
		{"le16", "le16 %r0", "d4 00 00 00 10 00 00 00"},
		{"be64", "be64 %r3", "dc 03 00 00 40 00 00 00"},
		{"bswap32", "bswap32 %r0", "d7 00 00 00 20 00 00 00"},
		{"swap32 alias", "swap32 %r0", "d7 00 00 00 20 00 00 00"},
		// Jumps and calls.
		{"ja", "ja +3", "05 00 03 00 00 00 00 00"},
		{"ja unsigned offset", "ja 3", "05 00 03 00 00 00 00 00"},
		{"ja32", "ja32 -2", "06 00 00 00 fe ff ff ff"},
		{"jeq32 imm", "jeq32 %r1, 0x80000000, +1", "16 01 01 00 00 00 00 80"},
		{"jsle reg", "jsle %r1, %r2, -1", "dd 21 ff ff 00 00 00 00"},
		{"jset", "jset %r1, 3, +0", "45 01 00 00 03 00 00 00"},
		{"helper call", "call 5", "85 00 00 00 05 00 00 00"},
		{"helper call spelled out", "call helper 5", "85 00 00 00 05 00 00 00"},
		{"callx", "call %r2", "8d 02 00 00 00 00 00 00"},
		{"call local offset", "call local +2", "85 10 00 00 02 00 00 00"},
		{"call runtime", "call runtime 7", "85 20 00 00 07 00 00 00"},
		{"exit", "exit", "95 00 00 00 00 00 00 00"},
		// Loads and stores.
		{"lddw", "lddw %r0, 0x1122334455667788", "18 00 00 00 88 77 66 55 00 00 00 00 44 33 22 11"},
		{"lddw -1", "lddw %r1, -1", "18 01 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff"},
		{"lddw map_by_fd", "lddw %r1, map_by_fd(3)", "18 11 00 00 03 00 00 00 00 00 00 00 00 00 00 00"},
		{"lddw map_val_by_idx", "lddw %r2, map_val_by_idx(1)+16", "18 62 00 00 01 00 00 00 00 00 00 00 10 00 00 00"},
		{"ldxdw", "ldxdw %r0, [%r1+8]", "79 10 08 00 00 00 00 00"},
		{"hex displacement", "ldxh %r0, [%r1+0x10]", "69 10 10 00 00 00 00 00"},
		{"spaced displacement", "ldxw %r0, [ %r1 + 8 ]", "61 10 08 00 00 00 00 00"},
		{"stb", "stb [%r10-1], 0x80", "72 0a ff ff 80 00 00 00"},
		{"stdw", "stdw [%r1+0x10], -1", "7a 01 10 00 ff ff ff ff"},
		{"stxdw", "stxdw [%r10-8], %r0", "7b 0a f8 ff 00 00 00 00"},
		{"ldabsw", "ldabsw 0x10", "20 00 00 00 10 00 00 00"},
		{"ldabsb", "ldabsb 3", "30 00 00 00 03 00 00 00"},
		{"ldindh", "ldindh %r2, 4", "48 20 00 00 04 00 00 00"},
		{"raw", ".raw 0x0000000100000095", "95 00 00 00 01 00 00 00"},
		// Labels.
		{"forward label over lddw", "jeq %r1, 0, done\nlddw %r0, 1\ndone:\nexit",
			"15 01 02 00 00 00 00 00  18 00 00 00 01 00 00 00  00 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00"},
		{"exit means first exit", "ja exit\nmov %r0, 1\nexit\nexit",
			"05 00 01 00 00 00 00 00  b7 00 00 00 01 00 00 00  95 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00"},
		{"explicit exit label wins", "ja exit\nexit\nmov %r0, 0\nexit:\nexit",
			"05 00 02 00 00 00 00 00  95 00 00 00 00 00 00 00  b7 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00"},
		{"call local backwards", "f:\nexit\ncall local f",
			"95 00 00 00 00 00 00 00  85 10 00 00 fe ff ff ff"},
		{"ja32 label", "ja32 there\nexit\nthere:\nexit",
			"06 00 00 00 01 00 00 00  95 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00"},
		{"label before instruction, comments, tabs", "start:\tmov %r0, 1 # one\n\t# nothing\n  ja start",
			"b7 00 00 00 01 00 00 00  05 00 fe ff 00 00 00 00"},
		{"label at end", "ja end\nend:", "05 00 00 00 00 00 00 00"},
		{"CRLF", "mov %r0, 1\r\nexit\r\n", "b7 00 00 00 01 00 00 00  95 00 00 00 00 00 00 00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			insns, err := asm.Assemble(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			want := hexBytes(t, tt.want)
			if got := asm.Encode(nil, insns); !bytes.Equal(got, want) {
				t.Fatalf("Assemble(%q)\n got % x\nwant % x", tt.src, got, want)
			}
			requireRoundTrip(t, insns)
		})
	}
}

func TestAssembleEmpty(t *testing.T) {
	insns, err := asm.Assemble("# nothing here\n\n")
	if err != nil || len(insns) != 0 {
		t.Fatalf("Assemble(comments only) = %v, %v; want no slots, no error", insns, err)
	}
}

func TestAssembleErrors(t *testing.T) {
	far := "ja end\n" + strings.Repeat("mov %r0, 0\n", 40000) + "end:\nexit"
	tests := []struct {
		name string
		src  string
		line int
		want string
	}{
		{"unknown mnemonic", "mov %r0, 1\nfoo %r1", 2, `unknown mnemonic "foo"`},
		{"unknown atomic", "lock nand [%r1], %r2", 1, `unknown mnemonic "lock nand"`},
		{"register out of range", "mov %r11, 1", 1, `no register "%r11"`},
		{"register without %", "mov r1, 1", 1, `"r1" is not a register`},
		{"memory without brackets", "ldxw %r0, %r1", 1, `memory operand "%r1"`},
		{"bad memory register", "ldxw %r0, [%r12+4]", 1, `no register "%r12"`},
		{"imm too big", "\nmov32 %r1, 0x100000000", 2, "does not fit in 32 bits"},
		{"imm too negative", "mov %r1, -2147483649", 1, "does not fit in 32 bits"},
		{"imm64 too big", "lddw %r0, 0x1ffffffffffffffff", 1, "does not fit in 64 bits"},
		{"not a number", "mov %r0, one", 1, `"one" is not a number`},
		{"octal prefix rejected", "mov %r0, 0o7", 1, `"0o7" is not a number`},
		{"displacement too big", "ldxw %r0, [%r1+70000]", 1, "does not fit in a signed 16-bit field"},
		{"jump offset too big", "ja +40000", 1, "does not fit in a signed 16-bit field"},
		{"label too far", far, 1, "too far for a 16-bit jump offset"},
		{"undefined label", "mov %r0, 0\n\nja nowhere\nexit", 3, `undefined label "nowhere"`},
		{"exit label without exit", "ja exit", 1, `undefined label "exit"`},
		{"duplicate label", "a:\nexit\na:\nexit", 3, "already defined at line 1"},
		{"bad label name", "1abc:\nexit", 1, `bad label name "1abc"`},
		{"bad jump target", "ja %r1", 1, "neither a label nor an offset"},
		{"missing operand", "jeq %r1, 0", 1, "bad operands for jeq"},
		{"extra operand", "exit %r0", 1, "bad operands for exit: want exit"},
		{"empty operand", "mov %r0,, 1", 1, "empty operand 2"},
		{"unknown lddw kind", "lddw %r1, map(3)", 1, "unknown lddw source kind"},
		{"raw negative", ".raw -1", 1, ".raw: -1 is negative"},
		{"raw operands", ".raw 1, 2", 1, ".raw takes one 64-bit value"},
		{"call local register", "call local %r1", 1, "neither a label nor an offset"},
		{"callx takes no imm form", "call %r1, 3", 1, "bad operands for call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := asm.Assemble(tt.src)
			if err == nil {
				t.Fatalf("Assemble(%q) succeeded, want error containing %q", tt.src, tt.want)
			}
			var le *asm.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LineError", err)
			}
			if le.Line != tt.line {
				t.Errorf("error at line %d, want line %d: %v", le.Line, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestAssembleReportsEveryBadLine(t *testing.T) {
	_, err := asm.Assemble("foo\nmov %r0, 1\nbar\nja nowhere")
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`line 1: unknown mnemonic "foo"`, `line 3: unknown mnemonic "bar"`, `line 4: undefined label "nowhere"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestMustAssemblePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "line 1") {
			t.Fatalf("recover() = %v, want a panic naming line 1", r)
		}
	}()
	asm.MustAssemble("nope")
}

func TestJumpTaken(t *testing.T) {
	tests := []struct {
		op    uint8
		x, y  uint64
		wide  bool
		taken bool
	}{
		{asm.JmpJEQ, 5, 5, true, true},
		{asm.JmpJEQ, 1<<32 | 5, 5, true, false},
		{asm.JmpJEQ, 1<<32 | 5, 5, false, true}, // JMP32 compares the low halves
		{asm.JmpJGT, 0xffffffff, 1, false, true},
		{asm.JmpJSGT, 0xffffffff, 1, false, false}, // -1 as int32
		{asm.JmpJSGT, 0xffffffff, 1, true, true},
		{asm.JmpJSLT, 1 << 63, 0, true, true},
		{asm.JmpJSET, 6, 3, true, true},
		{asm.JmpJSET, 4, 3, true, false},
		{asm.JmpJNE | asm.ClassJMP32, 1, 2, false, true}, // the class bits are ignored
		{asm.JmpJLE, 3, 3, true, true},
		{asm.JmpJSGE, 0x80000000, 0, false, false},
	}
	for _, tt := range tests {
		if got := asm.JumpTaken(tt.op, tt.x, tt.y, tt.wide); got != tt.taken {
			t.Errorf("JumpTaken(%#x, %#x, %#x, %v) = %v", tt.op, tt.x, tt.y, tt.wide, got)
		}
	}
}
