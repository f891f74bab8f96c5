package jit_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// Adversarial programs for compile time: whatever their shape, compiling
// must take time linear in their size, so that a program of a million
// slots (which vm.Load accepts) compiles in a second or two rather than
// minutes. Each generator repeats a group of instructions up to n slots
// and ends with "mov r0, 0; exit".

// adversarialSize is the slots of the benchmarks' programs; the
// environment variable UEBPF_COMPILE_SLOTS overrides it, to measure how
// the time grows.
func adversarialSize() int {
	if s, err := strconv.Atoi(os.Getenv("UEBPF_COMPILE_SLOTS")); err == nil && s > 0 {
		return s
	}
	return 1_000_000
}

// repeatGroups fills n slots with gen(i, at) for i = 0, 1, ..., where at
// is the slot the group starts at, and ends the program.
func repeatGroups(n int, gen func(i, at int) []asm.Instruction) []asm.Instruction {
	tail := asm.MustAssemble("mov %r0, 0\nexit")
	insns := make([]asm.Instruction, 0, n+16)
	for i := 0; ; i++ {
		g := gen(i, len(insns))
		if len(insns)+len(g)+len(tail) > n {
			break
		}
		insns = append(insns, g...)
	}
	return append(insns, tail...)
}

// adversarialPrograms are the shapes the benchmarks compile.
var adversarialPrograms = []struct {
	name string
	gen  func(n int) []asm.Instruction
}{
	// Small loops: a backward jump every third slot.
	{"small-loops", func(n int) []asm.Instruction {
		g := asm.MustAssemble("mov %r1, 3\nl:\nsub %r1, 1\njne %r1, 0, l")
		return repeatGroups(n, func(int, int) []asm.Instruction { return g })
	}},
	// Overlapping loops: a backward jump every fourth slot to up to
	// 32,000 slots back, so that most slots are inside thousands of
	// loops.
	{"overlapping-loops", func(n int) []asm.Instruction {
		g := asm.MustAssemble("add %r2, 1\nmov %r3, %r2\nand %r3, 7\njne %r3, 0, -1")
		return repeatGroups(n, func(i, at int) []asm.Instruction {
			span := min(at, 4*(i*37%8000))
			g[3].Offset = int16(-span - 1)
			return g
		})
	}},
	// Nested loops: each group is a loop around the previous one, a
	// chain of loops as deep as the program is long.
	{"nested-loops", func(n int) []asm.Instruction {
		g := asm.MustAssemble("add %r2, 1\njne %r2, 100, -1")
		return repeatGroups(n, func(i, at int) []asm.Instruction {
			g[1].Offset = int16(-min(at, 30000) - 2)
			return g
		})
	}},
	// Compare trees that are tables: a binary search over 16 values of
	// r1, each leaf going to the end of the tree.
	{"switches", func(n int) []asm.Instruction {
		var s string
		s += "jgt %r1, 7, upper\n"
		s += "jgt %r1, 3, l47\njgt %r1, 1, l23\njeq %r1, 0, v0\nja v1\n"
		s += "l23:\njeq %r1, 2, v2\nja v3\n"
		s += "l47:\njgt %r1, 5, l67\njeq %r1, 4, v4\nja v5\n"
		s += "l67:\njeq %r1, 6, v6\nja v7\n"
		s += "upper:\njgt %r1, 11, l1215\njgt %r1, 9, l1011\njeq %r1, 8, v8\nja v9\n"
		s += "l1011:\njeq %r1, 10, v10\nja v11\n"
		s += "l1215:\njgt %r1, 13, l1415\njeq %r1, 12, v12\nja v13\n"
		s += "l1415:\njeq %r1, 14, v14\nja v15\n"
		for v := range 16 {
			s += fmt.Sprintf("v%d:\nmov %%r0, %d\nja end\n", v, v)
		}
		s += "end:\nadd %r1, 1"
		g := asm.MustAssemble(s)
		return repeatGroups(n, func(int, int) []asm.Instruction { return g })
	}},
	// Long chains of comparisons of one register, none a table.
	{"compare-chains", func(n int) []asm.Instruction {
		g := asm.MustAssemble("jeq %r1, 1, +1\njgt %r1, 2, +0")
		return repeatGroups(n, func(int, int) []asm.Instruction { return g })
	}},
	// Straight code: ALU, stack and context accesses, divisions (which
	// ask whether r0 is dead) and additions folded into accesses.
	{"straight", func(n int) []asm.Instruction {
		g := asm.MustAssemble(`
			mov %r6, %r1
			add %r0, 7
			stxdw [%r10-16], %r0
			ldxdw %r2, [%r10-16]
			mul %r2, %r0
			div %r2, 3
			mov %r3, %r6
			add %r3, 0x10000
			ldxb %r4, [%r3+0]
			xor %r0, %r4`)
		return repeatGroups(n, func(int, int) []asm.Instruction { return g })
	}},
}

// BenchmarkCompileAdversarial compiles each adversarial program, checked
// and unchecked.
func BenchmarkCompileAdversarial(b *testing.B) {
	if !jit.Supported {
		b.Skip(jit.ErrUnsupportedArch)
	}
	n := adversarialSize()
	for _, ap := range adversarialPrograms {
		insns := ap.gen(n)
		vp, err := vm.Load(&vm.ProgramSpec{Name: ap.name, Instructions: insns}, nil)
		if err != nil {
			b.Fatal(ap.name, err)
		}
		for _, m := range []struct {
			name string
			opts jit.Options
		}{{"checked", jit.Options{}}, {"unchecked", jit.Options{Unchecked: true}}} {
			b.Run(ap.name+"/"+m.name, func(b *testing.B) {
				for b.Loop() {
					p, err := jit.Compile(vp, &m.opts)
					if err != nil {
						b.Fatal(err)
					}
					p.Close()
				}
			})
		}
	}
}

// BenchmarkLoadAdversarial measures vm.Load of the adversarial programs,
// which must be linear too.
func BenchmarkLoadAdversarial(b *testing.B) {
	n := adversarialSize()
	for _, ap := range adversarialPrograms {
		insns := ap.gen(n)
		b.Run(ap.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := vm.Load(&vm.ProgramSpec{Name: ap.name, Instructions: insns}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
