package verifier_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// widenedLoops are terminating loops too long to explore iteration by
// iteration: the verifier proves them with loop invariants (widening) and
// a ranking function. Each is verified, must report widened loops, and
// runs in the checked interpreter (ctx's first 8 bytes hold ctx8) to the
// expected r0. The context has testCtxSize bytes, or ctx.
var widenedLoops = []struct {
	name string
	src  string
	ctx8 uint64
	want uint64
	ctx  int
}{
	{"unknown bound", "ldxdw %r2, [%r1+0]\nand %r2, 0xfffff\nmov %r0, 0\nl:\nadd %r0, 1\njlt %r0, %r2, l\nexit", 5000, 5000, 0},
	{"too many iterations", "mov %r0, 0\nl:\nadd %r0, 1\njlt %r0, 100000, l\nexit", 0, 100000, 0},
	{"nested loops", "mov %r0, 0\no:\nmov %r2, 0\ni:\nadd %r2, 1\njlt %r2, 1000, i\nadd %r0, 1\njlt %r0, 1000, o\nexit", 0, 1000, 0},
	{"32-bit unknown bound", "ldxw %r2, [%r1+0]\nand32 %r2, 0x3fffff\nmov32 %r0, 0\nmov32 %r3, 0\njeq32 %r2, 0, +4\nl:\nadd32 %r0, 3\nadd32 %r3, 1\njlt32 %r3, %r2, l\nmov32 %r0, %r0\nexit", 7000, 21000, 0},
	{"countdown", "ldxw %r2, [%r1+0]\nand %r2, 0x1ffffff\nmov %r0, 0\njeq %r2, 0, +3\nl:\nadd %r0, 2\nsub %r2, 1\njne %r2, 0, l\nexit", 3000, 6000, 0},
	{"spilled sum", "ldxdw %r2, [%r1+0]\nand %r2, 0xffff\nmov %r0, 0\nstdw [%r10-8], 0\nl:\nldxdw %r3, [%r10-8]\nadd %r3, %r0\nstxdw [%r10-8], %r3\nadd %r0, 1\njlt %r0, %r2, l\nldxdw %r0, [%r10-8]\nexit", 3000, 3000 * 2999 / 2, 0},
	// prime's inner loop: d ends at i at the latest, since i % i == 0
	// (a relation between registers, with the remainder's test).
	{"trial division", "ldxw %r2, [%r1+0]\nor32 %r2, 2\nmov32 %r4, 2\nl:\nmov32 %r5, %r2\nmod32 %r5, %r4\njeq32 %r5, 0, +2\nadd32 %r4, 1\nja l\nmov32 %r0, %r4\nexit", 91, 7, 0},
	{"trial division up to d*d", "ldxw %r2, [%r1+0]\nor32 %r2, 2\nmov32 %r4, 2\nl:\nmov32 %r0, 1\nmov32 %r5, %r4\nmul32 %r5, %r5\njgt32 %r5, %r2, +6\nmov32 %r5, %r2\nmod32 %r5, %r4\nmov32 %r0, 0\njeq32 %r5, 0, +2\nadd32 %r4, 1\nja l\nexit", 1000003, 1, 0},
	{"step by four to a constant", "mov %r0, 0\nl:\nadd %r0, 4\njlt %r0, 40000, l\nexit", 0, 40000, 0},
	{"index bounded by the loop", "lddw %r6, map_val_by_fd(5)\nmov %r0, 0\nmov %r2, 0\nl:\nmov %r3, %r2\nand %r3, 15\nmov %r4, %r6\nadd %r4, %r3\nldxb %r4, [%r4+0]\nadd %r0, %r4\nadd %r2, 1\njlt %r2, 5000, l\nexit", 0, 0, 0},
	// memcpy's shape: the fall-through of jeq at the end of the counter's
	// range narrows it, so both accesses stay in the context.
	{"copy in the context", "mov %r2, 0\nl:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3+0]\nadd %r3, 2048\nstxb [%r3+0], %r4\nadd %r2, 1\njeq %r2, 2048, +1\nja l\nldxb %r0, [%r1+2048]\nexit", 7, 7, 4096},
	{"32-bit copy in the context", "mov32 %r2, 0\nl:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3+0]\nadd %r3, 2048\nstxb [%r3+0], %r4\nadd32 %r2, 1\njeq32 %r2, 2048, +1\nja l\nldxb %r0, [%r1+2048]\nexit", 9, 9, 4096},
}

func TestWidenedLoops(t *testing.T) {
	for _, tc := range widenedLoops {
		t.Run(tc.name, func(t *testing.T) {
			p := loadAsm(t, tc.src)
			size := testCtxSize
			if tc.ctx != 0 {
				size = tc.ctx
			}
			res, err := verifier.Verify(p, &verifier.Options{ContextSize: size})
			if err != nil {
				t.Fatal(err)
			}
			if res.LoopsWidened == 0 {
				t.Fatalf("no loop widened (%d insns processed)", res.InstructionsProcessed)
			}
			t.Logf("%d insns processed, %d widenings", res.InstructionsProcessed, res.LoopsWidened)
			env := vm.NewEnv()
			ctx := make([]byte, size)
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

// TestLoopsBoundedByBudget: with Options.LoopsBoundedByBudget, loops
// proved memory-safe but not proved to end are accepted, and only the
// run's budget stops them; memory safety and certainly infinite loops are
// checked as without the option.
func TestLoopsBoundedByBudget(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		refused error // without the option
		with    error // with it; nil: accepted
		want    error // running an accepted one: nil or vm.ErrBudgetExceeded
	}{
		// Ends after 2^64 iterations, over Options.MaxLoopIterations.
		{"counts to 2^64", "mov %r0, 0\nl:\nadd %r0, 1\njne %r0, 0, l\nexit", verifier.ErrTooComplex, nil, vm.ErrBudgetExceeded},
		// Ends because r2 reaches r3 (a relation between registers), with
		// nothing ranges can rank: like prime's inner loop.
		{"relational bound", "ldxdw %r3, [%r1+0]\nand %r3, 0xff\nor %r3, 1\nmov %r2, 0\nmov %r0, 0\nl:\nadd %r2, 1\nadd %r0, 3\nmov %r4, %r3\nsub %r4, %r2\njne %r4, 0, l\nexit", verifier.ErrInfiniteLoop, nil, nil},
		// Unproved loops must still keep their accesses in bounds.
		{"walks out of the context", "mov %r2, 0\nl:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r0, [%r3+0]\nadd %r2, 1\njne %r2, 0, l\nexit", verifier.ErrOutOfBounds, verifier.ErrOutOfBounds, nil},
		// The same state again: certainly infinite, refused either way.
		{"cycles through eight states", "mov %r0, 0\nl:\nadd %r0, 1\nand %r0, 7\njlt %r0, 100, l\nexit", verifier.ErrInfiniteLoop, verifier.ErrInfiniteLoop, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := loadAsm(t, tc.src)
			// A budget of 10,000 instructions gives the same refusals as
			// the default million, in a hundredth of the time.
			if _, err := verifier.Verify(p, &verifier.Options{ContextSize: testCtxSize, MaxInstructions: 10000}); !errors.Is(err, tc.refused) {
				t.Fatalf("without the option: %v, want %v", err, tc.refused)
			}
			res, err := verifier.Verify(p, &verifier.Options{ContextSize: testCtxSize, LoopsBoundedByBudget: true})
			if tc.with != nil {
				if !errors.Is(err, tc.with) {
					t.Fatalf("with the option: %v, want %v", err, tc.with)
				}
				return
			}
			if err != nil {
				t.Fatalf("with the option: %v", err)
			}
			if res.LoopsUnproven == 0 {
				t.Fatalf("accepted with no unproven loop: %+v", res)
			}
			env := vm.NewEnv()
			ctx := make([]byte, testCtxSize)
			ctx[0] = 200
			env.SetContext(ctx)
			env.SetBudget(1 << 20)
			got, err := p.Exec(env)
			if !errors.Is(err, tc.want) {
				t.Fatalf("run: %d, %v; want %v", got, err, tc.want)
			}
			if tc.want == nil && got != 3*201 {
				t.Fatalf("r0 = %d, want %d", got, 3*201)
			}
		})
	}
}
