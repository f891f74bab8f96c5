package verifier_test

import (
	"encoding/binary"
	"testing"

	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// widenedLoops are terminating loops too long to explore iteration by
// iteration: the verifier proves them with loop invariants (widening) and
// a ranking function. Each is verified, must report widened loops, and
// runs in the checked interpreter (ctx's first 8 bytes hold ctx8) to the
// expected r0.
var widenedLoops = []struct {
	name string
	src  string
	ctx8 uint64
	want uint64
}{
	{"unknown bound", "ldxdw %r2, [%r1+0]\nand %r2, 0xfffff\nmov %r0, 0\nl:\nadd %r0, 1\njlt %r0, %r2, l\nexit", 5000, 5000},
	{"too many iterations", "mov %r0, 0\nl:\nadd %r0, 1\njlt %r0, 100000, l\nexit", 0, 100000},
	{"nested loops", "mov %r0, 0\no:\nmov %r2, 0\ni:\nadd %r2, 1\njlt %r2, 1000, i\nadd %r0, 1\njlt %r0, 1000, o\nexit", 0, 1000},
	{"32-bit unknown bound", "ldxw %r2, [%r1+0]\nand32 %r2, 0x3fffff\nmov32 %r0, 0\nmov32 %r3, 0\njeq32 %r2, 0, +4\nl:\nadd32 %r0, 3\nadd32 %r3, 1\njlt32 %r3, %r2, l\nmov32 %r0, %r0\nexit", 7000, 21000},
	{"countdown", "ldxw %r2, [%r1+0]\nand %r2, 0x1ffffff\nmov %r0, 0\njeq %r2, 0, +3\nl:\nadd %r0, 2\nsub %r2, 1\njne %r2, 0, l\nexit", 3000, 6000},
	{"spilled sum", "ldxdw %r2, [%r1+0]\nand %r2, 0xffff\nmov %r0, 0\nstdw [%r10-8], 0\nl:\nldxdw %r3, [%r10-8]\nadd %r3, %r0\nstxdw [%r10-8], %r3\nadd %r0, 1\njlt %r0, %r2, l\nldxdw %r0, [%r10-8]\nexit", 3000, 3000 * 2999 / 2},
	{"step by four to a constant", "mov %r0, 0\nl:\nadd %r0, 4\njlt %r0, 40000, l\nexit", 0, 40000},
	{"index bounded by the loop", "lddw %r6, map_val_by_fd(5)\nmov %r0, 0\nmov %r2, 0\nl:\nmov %r3, %r2\nand %r3, 15\nmov %r4, %r6\nadd %r4, %r3\nldxb %r4, [%r4+0]\nadd %r0, %r4\nadd %r2, 1\njlt %r2, 5000, l\nexit", 0, 0},
}

func TestWidenedLoops(t *testing.T) {
	for _, tc := range widenedLoops {
		t.Run(tc.name, func(t *testing.T) {
			p := loadAsm(t, tc.src)
			res, err := verifier.Verify(p, &verifier.Options{ContextSize: testCtxSize})
			if err != nil {
				t.Fatal(err)
			}
			if res.LoopsWidened == 0 {
				t.Fatalf("no loop widened (%d insns processed)", res.InstructionsProcessed)
			}
			t.Logf("%d insns processed, %d widenings", res.InstructionsProcessed, res.LoopsWidened)
			env := vm.NewEnv()
			ctx := make([]byte, testCtxSize)
			binary.LittleEndian.PutUint64(ctx, tc.ctx8)
			env.SetContext(ctx)
			env.SetBudget(1 << 32)
			got, err := p.Exec(env)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("r0 = %d, want %d", got, tc.want)
			}
		})
	}
}
