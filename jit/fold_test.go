package jit_test

import (
	"testing"

	"github.com/uebpf/uebpf/jit"
)

// Programs where an add may be folded into the access after it, or must
// not be, run alike on the JIT and the interpreter. (A move right before
// the add would make the pair one lea instead: "mov %r0, 0" keeps them
// apart.)
func TestFoldedAccess(t *testing.T) {
	big := diffInput{mem: make([]byte, 0x10020)}
	for _, tc := range []struct {
		name  string
		src   string
		modes []jit.Options
	}{
		{"store, dead", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 8\nstxdw [%r3+0], %r1\nmov %r3, 0\nldxdw %r0, [%r1+8]\nexit", allModes},
		{"store imm", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 4\nstw [%r3+0], 7\nmov %r3, 0\nldxw %r0, [%r1+4]\nexit", allModes},
		{"store, live at exit", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 8\nstxdw [%r3+0], %r1\nmov %r0, %r3\nexit", allModes},
		{"stores the sum", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 8\nstxdw [%r3+0], %r3\nmov %r3, 0\nldxdw %r0, [%r1+8]\nexit", allModes},
		{"load into the base", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 8\nldxdw %r3, [%r3+0]\nmov %r0, %r3\nexit", allModes},
		{"load, negative offset", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 20\nldxw %r0, [%r3-4]\nmov %r3, 0\nexit", allModes},
		{"load sign-extended", "stw [%r1+12], -5\nmov %r3, %r1\nmov %r0, 0\nadd %r3, 8\nldxsw %r0, [%r3+4]\nmov %r3, 0\nexit", allModes},
		{"live on one branch", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 8\nstb [%r3+0], 1\njne %r2, 0, +2\nmov %r3, 0\nexit\nmov %r0, %r3\nexit", allModes},
		{"live across the back edge", "mov %r3, %r1\nmov %r5, 0\nadd %r3, 1\nstxb [%r3+0], %r5\nadd %r5, 1\njlt %r5, 6, -4\nmov %r3, 0\nldxdw %r0, [%r1+0]\nexit", allModes},
		{"dead across the back edge", "mov %r5, 0\nmov %r3, %r1\nadd %r3, %r5\nadd %r3, 8\nstxb [%r3+0], %r5\nadd %r5, 1\njlt %r5, 6, -6\nmov %r3, 0\nldxdw %r0, [%r1+8]\nexit", allModes},
		{"offset beyond 16 bits", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 0x10000\nstxdw [%r3+8], %r1\nmov %r3, %r1\nadd %r3, 0x10000\nldxdw %r0, [%r3+8]\nexit", allModes},
		{"fault at the folded address", "mov %r3, %r1\nmov %r0, 0\nadd %r3, 0x20000\nstxb [%r3+0], %r1\nmov %r3, 0\nexit", checkedModes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffSource(t, tc.src, big, tc.modes)
		})
	}
}

// A division goes through rax, which holds r0: r0 is kept only when
// something may read it, and the special divisors (0, -1) are out of
// line. Programs where r0 is read or not after each kind of division, with
// each special divisor, run alike on the JIT and the interpreter.
func TestDivisionAndR0(t *testing.T) {
	var srcs []string
	for _, op := range []string{"div", "mod", "sdiv", "smod", "div32", "mod32", "sdiv32", "smod32"} {
		for _, divisor := range []string{"7", "0", "-1"} {
			prefix := "lddw %r0, 0x8000000000000000\nmov %r3, %r0\nmov %r4, " + divisor + "\nmov %r0, 11\n"
			if len(op) > 4 && op[len(op)-2:] == "32" {
				prefix = "mov %r3, -2147483648\nmov %r4, " + divisor + "\nmov %r0, 11\n"
			}
			srcs = append(srcs,
				prefix+op+" %r3, %r4\nmov %r0, %r3\nexit",               // r0 dead
				prefix+op+" %r3, %r4\nadd %r0, %r3\nexit",               // r0 read
				prefix+op+" %r3, %r4\njeq %r3, 0, +1\nmov %r0, 5\nexit", // read on one path
				prefix+op+" %r0, %r4\nexit",                             // r0 divided
			)
		}
	}
	for _, src := range srcs {
		t.Run("", func(t *testing.T) {
			diffSource(t, src, diffInput{mem: make([]byte, 8)}, allModes)
		})
	}
}
