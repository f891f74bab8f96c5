package jit_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
)

// interesting operand values for ALU and jump tests: the edges of 8, 16,
// 32 and 64-bit arithmetic, shift counts at and past the width.
var interesting = []uint64{
	0, 1, 7, 31, 32, 63, 64, 0x8000, 0x7fffffff, 0x80000000, 0xffffffff,
	0x123456789abcdef0, 0x7fffffffffffffff, 0x8000000000000000,
	0xffffffffffffffff, 0xffffffff80000000,
}

// tableModes are the modes of the table tests: both safety modes, and
// every alternative code path (blinding, no BMI2, no MOVBE) in one.
var tableModes = []jit.Options{{Unchecked: true}, {}, {Blind: true, AMD64: jit.AMD64Options{DisableBMI2: true, DisableMOVBE: true}}}

// regPairs are (dst, src) pairs: distinct, equal, and with r0, which
// division and cmpxchg use implicitly.
var regPairs = [][2]int{{0, 1}, {1, 0}, {3, 3}, {0, 0}, {6, 2}, {4, 8}, {7, 5}}

// storeRegs stores r0..r8 at ctx slot base.
func storeRegs(s *strings.Builder, base int) {
	for r := 0; r <= 8; r++ {
		fmt.Fprintf(s, "stxdw [%%r9+%d], %%r%d\n", 8*(base+r), r)
	}
}

// storeAndNext ends the block of every operand pair: it stores every
// register and moves r9 to the next pair's slots. It is assembled once.
var storeAndNext = sync.OnceValue(func() []asm.Instruction {
	var s strings.Builder
	storeRegs(&s, 0)
	s.WriteString("add %r9, 72\n")
	return asm.MustAssemble(s.String())
})

// valueProgram builds a program that, for each operand pair, sets all
// registers (distinct constants in r0..r8; r9 holds the context), loads a
// and b into dst and src, runs body (which may use DST, SRC and IMM
// placeholders) and stores every register. Only body is assembled, once
// per distinct IMM: the rest is built as instructions, which keeps the
// table tests' time in the engines rather than in the assembler.
func valueProgram(dst, src int, body string, pairs [][2]uint64) ([]asm.Instruction, int) {
	body = strings.NewReplacer("DST", fmt.Sprintf("%%r%d", dst), "SRC", fmt.Sprintf("%%r%d", src)).Replace(body)
	bodies := map[int32][]asm.Instruction{}
	insns := asm.MustAssemble("mov %r9, %r1")
	for i, ab := range pairs {
		lddw := func(r int, v uint64) {
			ld := asm.LDDW(uint8(r), v)
			insns = append(insns, ld[:]...)
		}
		for r := range 9 {
			lddw(r, uint64(0x1111111111111111)*uint64(r+1)+uint64(i))
		}
		lddw(src, ab[1])
		lddw(dst, ab[0])
		imm := int32(ab[1])
		b, ok := bodies[imm]
		if !ok {
			b = asm.MustAssemble(strings.ReplaceAll(body, "IMM", fmt.Sprintf("%d", imm)))
			bodies[imm] = b
		}
		insns = append(insns, b...)
		insns = append(insns, storeAndNext()...)
	}
	insns = append(insns, asm.MustAssemble("mov %r0, 0\nexit")...)
	return insns, 8 * 9 * len(pairs)
}

func allPairs() [][2]uint64 {
	var ps [][2]uint64
	for _, a := range interesting {
		for _, b := range interesting {
			ps = append(ps, [2]uint64{a, b})
		}
	}
	return ps
}

func TestALU(t *testing.T) {
	ops := []string{"add", "sub", "mul", "div", "sdiv", "or", "and", "lsh", "rsh", "mod", "smod", "xor", "mov", "arsh"}
	pairs := allPairs()
	for _, op := range ops {
		for _, w := range []string{"", "32"} {
			for _, form := range []string{"SRC", "IMM"} {
				for _, rp := range regPairs {
					name := fmt.Sprintf("%s%s_%s_r%d_r%d", op, w, form, rp[0], rp[1])
					t.Run(name, func(t *testing.T) {
						insns, n := valueProgram(rp[0], rp[1], fmt.Sprintf("%s%s DST, %s", op, w, form), pairs)
						diffInsns(t, insns, diffInput{mem: make([]byte, n)}, tableModes)
					})
				}
			}
		}
	}
}

func TestUnary(t *testing.T) {
	ops := []string{
		"neg DST", "neg32 DST",
		"movsx832 DST, SRC", "movsx1632 DST, SRC", "movsx864 DST, SRC", "movsx1664 DST, SRC", "movsx3264 DST, SRC",
		"le16 DST", "le32 DST", "le64 DST", "be16 DST", "be32 DST", "be64 DST",
		"bswap16 DST", "bswap32 DST", "bswap64 DST",
	}
	var pairs [][2]uint64
	for _, a := range interesting {
		pairs = append(pairs, [2]uint64{a, a ^ 0x0123456789abcdef})
	}
	for _, op := range ops {
		for _, rp := range regPairs {
			t.Run(fmt.Sprintf("%s_r%d_r%d", strings.Fields(op)[0], rp[0], rp[1]), func(t *testing.T) {
				insns, n := valueProgram(rp[0], rp[1], op, pairs)
				diffInsns(t, insns, diffInput{mem: make([]byte, n)}, tableModes)
			})
		}
	}
}

func TestConditionalJumps(t *testing.T) {
	ops := []string{"jeq", "jgt", "jge", "jset", "jne", "jsgt", "jsge", "jlt", "jle", "jslt", "jsle"}
	pairs := allPairs()
	for _, op := range ops {
		for _, w := range []string{"", "32"} {
			for _, form := range []string{"SRC", "IMM"} {
				for _, rp := range [][2]int{{1, 2}, {0, 0}, {5, 0}} {
					t.Run(fmt.Sprintf("%s%s_%s_r%d_r%d", op, w, form, rp[0], rp[1]), func(t *testing.T) {
						body := fmt.Sprintf("mov %%r8, 0\n%s%s DST, %s, +1\nmov %%r8, 1", op, w, form)
						insns, n := valueProgram(rp[0], rp[1], body, pairs)
						diffInsns(t, insns, diffInput{mem: make([]byte, n)}, tableModes)
					})
				}
			}
		}
	}
}

// TestDivModPow2 covers unsigned division and modulo by constant powers of
// two, which compile to shifts and masks: every power an imm can give in
// both widths (1<<31 only as the 32-bit view of imm -1<<31), next to
// their neighbours, which take the division.
func TestDivModPow2(t *testing.T) {
	var pairs [][2]uint64
	for _, a := range interesting {
		for _, k := range []uint{0, 1, 3, 7, 16, 30, 31} {
			for _, d := range []uint64{1<<k - 1, 1 << k, 1<<k + 1} {
				pairs = append(pairs, [2]uint64{a, d})
			}
		}
	}
	for _, op := range []string{"div", "mod", "div32", "mod32"} {
		for _, rp := range [][2]int{{0, 1}, {3, 3}, {6, 2}} {
			t.Run(fmt.Sprintf("%s_r%d", op, rp[0]), func(t *testing.T) {
				insns, n := valueProgram(rp[0], rp[1], op+" DST, IMM", pairs)
				diffInsns(t, insns, diffInput{mem: make([]byte, n)}, tableModes)
			})
		}
	}
}

// TestDivModConst covers unsigned division and modulo by constants, which
// compile to a multiplication by the reciprocal: small and large divisors,
// both signs of imm (a negative imm is a divisor of 2^63 or more in
// 64-bit), dividends at the edges and pseudo-random ones.
func TestDivModConst(t *testing.T) {
	divisors := []int32{3, 5, 6, 7, 10, 11, 100, 641, 1000, 12345, 1<<20 + 7, 0x7ffffffd, 0x7fffffff,
		-1, -2, -3, -7, -100, -1 << 30, -1<<31 + 1, -1 << 31}
	dividends := append([]uint64(nil), interesting...)
	x := uint64(0x9e3779b97f4a7c15)
	for range 12 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		dividends = append(dividends, x, x>>32, x>>48)
	}
	var pairs [][2]uint64
	for _, a := range dividends {
		for _, d := range divisors {
			pairs = append(pairs, [2]uint64{a, uint64(int64(d))})
		}
	}
	for _, op := range []string{"div", "mod", "div32", "mod32"} {
		for _, rp := range [][2]int{{0, 1}, {3, 3}, {6, 2}, {2, 0}} {
			t.Run(fmt.Sprintf("%s_r%d", op, rp[0]), func(t *testing.T) {
				insns, n := valueProgram(rp[0], rp[1], op+" DST, IMM", pairs)
				diffInsns(t, insns, diffInput{mem: make([]byte, n)}, tableModes)
			})
		}
	}
}
