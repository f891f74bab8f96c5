package arm64

import (
	"testing"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// TestLookupCode: the inline paths of array lookups and hash updates have
// the expected length (the hit path of a lookup, from the call to the slot
// after it, with the base or table address in 2 or 3 instructions), and
// the whole code decodes.
func TestLookupCode(t *testing.T) {
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	if err != nil {
		t.Fatal(err)
	}
	const (
		stackKey = "stw [%r10-4], 3\nmov %r2, %r10\nadd %r2, -4\n"
		regKey   = "mov %r3, 3\nstxw [%r10-4], %r3\nmov %r2, %r10\nadd %r2, -4\n"
		known    = "lddw %r1, 0\n"
		generic  = "lddw %r7, 0\nmov %r1, %r7\n"
		// A block start between the key and the call: r2 is no longer
		// known to point into the frame.
		far = "ja l\nl:\n"
	)
	cases := []struct {
		name     string
		src      string
		checked  bool
		min, max int // instructions from the call to the next slot
	}{
		{"known", known + stackKey + "call 1\njeq %r0, 0, out\nldxdw %r0, [%r0+0]\nout:\nexit", false, 6, 7},
		{"known checked", known + stackKey + "call 1\njeq %r0, 0, out\nldxdw %r0, [%r0+0]\nout:\nexit", true, 6, 7},
		{"known key in a register", known + regKey + "call 1\nexit", false, 6, 7},
		// The hit takes the jump: the stretch's charge, the branch and
		// the budget's exit, not run.
		{"known jne", known + stackKey + "call 1\njne %r0, 0, out\nmov %r0, 1\nout:\nexit", false, 8, 9 + 5},
		{"generic", generic + stackKey + "call 1\nexit", false, 16, 17},
		{"generic checked", generic + stackKey + "call 1\nexit", true, 16, 17},
		{"generic checked far key", generic + stackKey + far + "mov %r1, %r7\ncall 1\nexit", true, 20, 21},
		{"hash update", "lddw %r1, 1\n" + stackKey + "mov %r3, %r10\nadd %r3, -16\nstdw [%r10-16], 0\nmov %r4, 0\ncall 2\nexit", false, 60, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			insns := asm.MustAssemble(tc.src)
			for i := range insns {
				if insns[i].Opcode == asm.OpLDDW {
					insns[i].Src = asm.PseudoMapFD
				}
			}
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{array, hash}}, &vm.Options{Helpers: helpers.Standard(nil)})
			if err != nil {
				t.Fatal(err)
			}
			c := newA64Compiler(vp, tc.checked, false, 0)
			code, err := c.compile()
			if err != nil {
				t.Fatal(err)
			}
			call := -1
			for pc, ins := range insns {
				if ins.Opcode == asm.OpCall {
					call = pc
				}
			}
			n := int(c.offsets[call+1]-c.offsets[call]) / 4
			if n < tc.min || n > tc.max {
				t.Errorf("%d instructions from the call to the next slot, want %d to %d", n, tc.min, tc.max)
			}
			for off := c.bodyOff; off < len(code); off += 4 {
				if _, err := arm64asm.Decode(code[off : off+4]); err != nil {
					// The array table after the stubs is data.
					if len(c.lk.arrays) == 0 || off < len(code)-arrayInfoSize*len(c.lk.arrays) {
						t.Fatalf("word at %#x: %v", off, err)
					}
				}
			}
			if testing.Verbose() {
				t.Logf("%d instructions (inline updates: %d)", n, c.lk.updates)
			}
		})
	}
}
