package frontend

import (
	"testing"

	"github.com/uebpf/uebpf/asm"
)

// A back end may leave a dead register with another value (an "add dst,
// imm" folded into the access through dst after it): DeadAfter decides,
// conservatively.
func TestDeadAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string // r3 after slot 0
		want bool
	}{
		{"written", "mov %r3, 0\nexit", true},
		{"read by exit", "exit", false},
		{"read", "mov %r0, %r3\nmov %r3, 0\nexit", false},
		{"add reads", "add %r3, 1\nmov %r3, 0\nexit", false},
		{"32-bit move writes", "mov32 %r3, 1\nexit", true},
		{"loaded into", "ldxdw %r3, [%r1+0]\nexit", true},
		{"load base", "ldxdw %r0, [%r3+0]\nmov %r3, 0\nexit", false},
		{"store base", "stdw [%r3+0], 1\nmov %r3, 0\nexit", false},
		{"stored", "stxdw [%r10-8], %r3\nmov %r3, 0\nexit", false},
		{"compared", "jeq %r3, 0, +0\nmov %r3, 0\nexit", false},
		{"read on one branch", "jeq %r1, 0, +2\nmov %r3, 0\nexit\nmov %r0, %r3\nmov %r3, 0\nexit", false},
		{"written on both branches", "jeq %r1, 0, +2\nmov %r3, 0\nexit\nmov %r3, 1\nexit", true},
		{"back edge to a read", "mov %r0, %r3\nmov %r3, 2\nadd %r4, 1\njlt %r4, 3, -4\nmov %r3, 0\nexit", false},
		{"loop writes first", "mov %r3, %r1\nadd %r4, 1\njlt %r4, 3, -3\nmov %r3, 0\nexit", true},
		{"helper call", "call 1\nmov %r3, 0\nexit", false},
		{"lddw", "lddw %r3, 0x1122334455667788\nexit", true},
		{"atomic through it", "lock add [%r3+0], %r1\nmov %r3, 0\nexit", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			insns, err := asm.Assemble("mov %r3, %r1\n" + tc.src)
			if err != nil {
				t.Fatal(err)
			}
			a := &Analysis{insns: insns}
			if got := a.DeadAfter(1, asm.R3); got != tc.want {
				t.Errorf("DeadAfter = %v, want %v", got, tc.want)
			}
		})
	}
}
