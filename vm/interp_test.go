package vm_test

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

func mustLoad(t testing.TB, src string, helpers vm.Helpers) *vm.Program {
	t.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: t.Name(), Instructions: insns}, &vm.Options{Helpers: helpers})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

// resultCase is a program (without its final exit) and the r0 it returns.
type resultCase struct {
	name string
	src  string
	want uint64
}

func runCases(t *testing.T, cases []resultCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustLoad(t, tc.src+"\nexit", nil).Run(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("r0 = %#x, want %#x", got, tc.want)
			}
		})
	}
}

func TestALUEdgeCases(t *testing.T) {
	runCases(t, []resultCase{
		{"lsh64 by 64 masks to 0", "mov %r0, 1\nmov %r1, 64\nlsh %r0, %r1", 1},
		{"lsh64 by 65 masks to 1", "mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1", 2},
		{"lsh32 by 32 masks to 0", "mov %r0, 1\nmov %r1, 32\nlsh32 %r0, %r1", 1},
		{"rsh32 zero-extends", "lddw %r0, 0xffffffff00000010\nrsh32 %r0, 4", 1},
		{"arsh32 sign-fills then zero-extends", "mov32 %r0, 0x80000000\narsh32 %r0, 31", 0xffffffff},
		{"arsh64", "mov %r0, -16\narsh %r0, 2", math.MaxUint64 - 3},
		{"add32 wraps and zero-extends", "mov %r0, -1\nadd32 %r0, 2", 1},
		{"mov32 zero-extends negative", "mov32 %r0, -1", 0xffffffff},
		{"mov64 sign-extends imm", "mov %r0, -1", math.MaxUint64},
		{"neg32", "mov %r0, 1\nneg32 %r0", 0xffffffff},
		{"neg64 INT_MIN", "lddw %r0, 0x8000000000000000\nneg %r0", 1 << 63},
		{"div64 by zero", "mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1", 0},
		{"mod64 by zero keeps dividend", "mov %r0, 7\nmov %r1, 0\nmod %r0, %r1", 7},
		{"div32 by zero", "mov %r0, 7\nmov32 %r1, 0\ndiv32 %r0, %r1", 0},
		{"mod32 by zero truncates", "lddw %r0, 0x100000007\nmov %r1, 0\nmod32 %r0, %r1", 7},
		{"div32 uses low bits of divisor", "mov %r0, 8\nlddw %r1, 0x100000002\ndiv32 %r0, %r1", 4},
		{"sdiv64 INT_MIN / -1", "lddw %r0, 0x8000000000000000\nsdiv %r0, -1", 1 << 63},
		{"smod64 INT_MIN % -1", "lddw %r0, 0x8000000000000000\nsmod %r0, -1", 0},
		{"sdiv32 INT_MIN / -1", "mov32 %r0, 0x80000000\nsdiv32 %r0, -1", 0x80000000},
		{"sdiv64 truncates toward zero", "mov %r0, -7\nsdiv %r0, 2", math.MaxUint64 - 2},
		{"smod64 sign of dividend", "mov %r0, -7\nsmod %r0, 2", math.MaxUint64},
		{"smod32 by zero truncates", "lddw %r0, 0x1fffffff9\nmov %r1, 0\nsmod32 %r0, %r1", 0xfffffff9},
		{"mul32 overflow", "mov32 %r0, 0x10000\nmul32 %r0, 0x10000", 0},
		{"movsx8 64", "mov %r1, 0x80\nmovsx864 %r0, %r1", 0xffffffffffffff80},
		{"movsx16 32", "mov %r1, 0x8000\nmovsx1632 %r0, %r1", 0xffff8000},
		{"movsx32 64", "mov32 %r1, 0x80000000\nmovsx3264 %r0, %r1", 0xffffffff80000000},
		{"be16 swaps and truncates", "lddw %r0, 0x1122334455667788\nbe16 %r0", 0x8877},
		{"le32 truncates", "lddw %r0, 0x1122334455667788\nle32 %r0", 0x55667788},
		{"bswap64", "lddw %r0, 0x1122334455667788\nbswap64 %r0", 0x8877665544332211},
		{"xor64", "mov %r0, 0xff\nxor %r0, 0x0f", 0xf0},
	})
}

func TestJumps(t *testing.T) {
	runCases(t, []resultCase{
		{"jsgt signed", "mov %r0, 0\nmov %r1, -1\njsgt %r1, 0, +1\nmov %r0, 1", 1},
		{"jgt unsigned", "mov %r0, 0\nmov %r1, -1\njgt %r1, 0, +1\nmov %r0, 1", 0},
		{"jeq32 ignores high bits", "mov %r0, 0\nlddw %r1, 0x100000005\njeq32 %r1, 5, +1\nmov %r0, 1", 0},
		{"jslt32 signed low half", "mov %r0, 0\nmov32 %r1, 0xffffffff\njslt32 %r1, 0, +1\nmov %r0, 1", 0},
		{"jset", "mov %r0, 0\nmov %r1, 6\njset %r1, 2, +1\nmov %r0, 1", 0},
		{"ja32", "mov %r0, 1\nja32 +1\nmov %r0, 2", 1},
		{"bounded loop", "mov %r0, 0\nmov %r1, 10\nadd %r0, 3\nsub %r1, 1\njne %r1, 0, -3", 30},
	})
}

func TestLoadsAndStores(t *testing.T) {
	mem := []byte{0x80, 0xff, 0x7f, 0x80, 1, 2, 3, 4, 5, 6, 7, 8}
	cases := []struct {
		src  string
		want uint64
	}{
		{"ldxb %r0, [%r1]", 0x80},
		{"ldxsb %r0, [%r1]", 0xffffffffffffff80},
		{"ldxsh %r0, [%r1]", 0xffffffffffffff80},
		{"ldxsw %r0, [%r1]", 0xffffffff807fff80},
		{"ldxh %r0, [%r1+2]", 0x807f},
		{"ldxdw %r0, [%r1+4]", 0x0807060504030201},
		{"stdw [%r10-8], -2\nldxdw %r0, [%r10-8]", math.MaxUint64 - 1},
		{"stw [%r1+4], -1\nldxdw %r0, [%r1+4]", 0x08070605ffffffff},
		{"mov %r2, 0x1234\nstxh [%r10-2], %r2\nldxh %r0, [%r10-2]", 0x1234},
	}
	for _, tc := range cases {
		got, err := mustLoad(t, tc.src+"\nexit", nil).Run(append([]byte(nil), mem...))
		if err != nil || got != tc.want {
			t.Errorf("%q: r0 = %#x, %v; want %#x", tc.src, got, err, tc.want)
		}
	}
}

func TestAtomics(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		wantR0   uint64
		wantSlot uint64 // the stack slot [r10-8] afterwards
	}{
		{"add64", "stdw [%r10-8], 5\nmov %r1, 3\nlock add [%r10-8], %r1\nmov %r0, %r1", 3, 8},
		{"fetch add64", "stdw [%r10-8], 5\nmov %r1, 3\nlock fetch add [%r10-8], %r1\nmov %r0, %r1", 5, 8},
		{"fetch add32 zero-extends", "stdw [%r10-8], -1\nmov %r1, 1\nlock fetch add32 [%r10-8], %r1\nmov %r0, %r1", 0xffffffff, 0xffffffff00000000},
		{"fetch or", "stdw [%r10-8], 1\nmov %r1, 6\nlock fetch or [%r10-8], %r1\nmov %r0, %r1", 1, 7},
		{"fetch and32", "stdw [%r10-8], 7\nmov %r1, 2\nlock fetch and32 [%r10-8], %r1\nmov %r0, %r1", 7, 2},
		{"fetch xor", "stdw [%r10-8], 5\nmov %r1, 1\nlock fetch xor [%r10-8], %r1\nmov %r0, %r1", 5, 4},
		{"xchg", "stdw [%r10-8], 5\nmov %r1, 9\nlock xchg [%r10-8], %r1\nmov %r0, %r1", 5, 9},
		{"cmpxchg hit", "stdw [%r10-8], 5\nmov %r0, 5\nmov %r1, 9\nlock cmpxchg [%r10-8], %r1", 5, 9},
		{"cmpxchg miss", "stdw [%r10-8], 5\nmov %r0, 4\nmov %r1, 9\nlock cmpxchg [%r10-8], %r1", 5, 5},
		{"cmpxchg32 compares low half", "stdw [%r10-8], 5\nlddw %r0, 0x100000005\nmov %r1, 9\nlock cmpxchg32 [%r10-8], %r1", 5, 9},
	}
	// The program copies the slot to the context, which r6 keeps.
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "mov %r6, %r1\n" + tc.src + "\nldxdw %r2, [%r10-8]\nstxdw [%r6], %r2\nexit"
			ctx := make([]byte, 8)
			r0, err := mustLoad(t, src, nil).Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			slot := binary.LittleEndian.Uint64(ctx)
			if r0 != tc.wantR0 || slot != tc.wantSlot {
				t.Errorf("r0 = %#x, slot = %#x; want %#x, %#x", r0, slot, tc.wantR0, tc.wantSlot)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		mem  int
		want error
		pc   int
	}{
		{"load below the stack", "ldxdw %r0, [%r10-4100]\nexit", 0, vm.ErrMemoryAccess, 0},
		{"load at r10", "ldxb %r0, [%r10]\nexit", 0, vm.ErrMemoryAccess, 0},
		{"load past the context", "ldxw %r0, [%r1+6]\nexit", 8, vm.ErrMemoryAccess, 0},
		{"store to null", "mov %r1, 0\nstb [%r1], 1\nexit", 0, vm.ErrMemoryAccess, 1},
		{"wild address", "lddw %r1, 0xdeadbeef000\nldxdw %r0, [%r1]\nexit", 0, vm.ErrMemoryAccess, 2},
		{"misaligned atomic", "mov %r1, 1\nlock add [%r10-15], %r1\nexit", 0, vm.ErrMisaligned, 1},
		{"infinite loop", "mov %r0, 0\nja -1\nexit", 0, vm.ErrBudgetExceeded, 1},
		{"unknown callx", "mov %r1, 77\ncall %r1\nexit", 0, vm.ErrUnknownHelper, 1},
		{"call depth", "call local f\nexit\nf:\ncall local f\nexit", 0, vm.ErrCallDepth, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.src, nil)
			env := vm.NewEnv()
			env.SetContext(make([]byte, tc.mem))
			env.SetBudget(1000)
			_, err := p.Exec(env)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var re *vm.RunError
			if !errors.As(err, &re) || re.PC != tc.pc {
				t.Fatalf("err = %#v, want pc %d", err, tc.pc)
			}
		})
	}
}

// TestBudgetBoundsCallTrees: a function that calls itself many times in
// straight-line code makes a call tree exponential in the call depth with
// no loop anywhere. The budget must still stop it.
func TestBudgetBoundsCallTrees(t *testing.T) {
	// r6 counts the depth (the callee sees the caller's r6, and the caller
	// gets it back): 40 calls a level, 6 levels deep.
	src := "mov %r6, 0\ncall local f\nexit\nf:\nadd %r6, 1\njgt %r6, 6, +40\n" +
		strings.Repeat("call local f\n", 40) + "exit"
	env := vm.NewEnv()
	env.SetBudget(100_000)
	_, err := mustLoad(t, src, nil).Exec(env)
	if !errors.Is(err, vm.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want %v", err, vm.ErrBudgetExceeded)
	}
}

func TestExecutedCountsInstructions(t *testing.T) {
	cases := []struct {
		src  string
		want uint64
	}{
		{"mov %r0, 1\nexit", 2},
		{"mov %r0, 0\nmov %r1, 10\nadd %r0, 3\nsub %r1, 1\njne %r1, 0, -3\nexit", 2 + 10*3 + 1},
		{"mov %r0, 0\nja +1\nmov %r0, 1\nexit", 3},
		{"call local f\nexit\nf:\nmov %r0, 2\nexit", 4},
	}
	for _, tc := range cases {
		env := vm.NewEnv()
		if _, err := mustLoad(t, tc.src, nil).Exec(env); err != nil {
			t.Fatal(err)
		}
		if got := env.Executed(); got != tc.want {
			t.Errorf("%q: executed %d, want %d", tc.src, got, tc.want)
		}
		// A budget of exactly that many instructions is enough; one less is not.
		env.SetBudget(tc.want)
		if _, err := mustLoad(t, tc.src, nil).Exec(env); err != nil {
			t.Errorf("%q with budget %d: %v", tc.src, tc.want, err)
		}
		env.SetBudget(tc.want - 1)
		if _, err := mustLoad(t, tc.src, nil).Exec(env); !errors.Is(err, vm.ErrBudgetExceeded) {
			t.Errorf("%q with budget %d: err = %v", tc.src, tc.want-1, err)
		}
	}
}

func TestLocalCallsPreserveCalleeSaved(t *testing.T) {
	src := `
		mov %r6, 1
		mov %r1, 5
		call local double
		add %r0, %r6   # r6 must survive the call
		exit
	double:
		mov %r6, 100
		stdw [%r10-8], 7   # the callee's own frame
		mov %r0, %r1
		add %r0, %r1
		exit`
	got, err := mustLoad(t, src, nil).Run(nil)
	if err != nil || got != 11 {
		t.Fatalf("r0 = %d, %v; want 11", got, err)
	}
}

func TestHelpers(t *testing.T) {
	helpers := vm.Helpers{
		1: {Name: "sum", Func: func(env *vm.Env, r1, r2, r3, r4, r5 uint64) uint64 {
			return r1 + r2 + r3 + r4 + r5
		}},
		2: {Name: "stop", Func: func(env *vm.Env, r1, _, _, _, _ uint64) uint64 {
			env.Stop(r1)
			return 0
		}},
		3: {Name: "fail", Func: func(env *vm.Env, _, _, _, _, _ uint64) uint64 {
			env.Fail(errors.New("helper says no"))
			return 0
		}},
		4: {Name: "panics", Func: func(env *vm.Env, _, _, _, _, _ uint64) uint64 {
			panic("boom")
		}},
		5: {Name: "read", Func: func(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
			b, ok := env.Bytes(r1, r2, false)
			if !ok {
				return math.MaxUint64
			}
			return uint64(b[0])
		}},
	}
	cases := []struct {
		name    string
		src     string
		want    uint64
		wantErr error
	}{
		{"arguments", "mov %r1, 1\nmov %r2, 2\nmov %r3, 3\nmov %r4, 4\nmov %r5, 5\ncall 1\nexit", 15, nil},
		{"stop", "mov %r1, 42\ncall 2\nmov %r0, 1\nexit", 42, nil},
		{"fail", "call 3\nexit", 0, nil},
		{"panic is an error", "call 4\nexit", 0, vm.ErrHelperPanicked},
		{"callx", "mov %r1, 1\nmov %r2, 1\nmov %r6, 1\ncall %r6\nexit", 2, nil},
		{"helper reads the stack", "stb [%r10-1], 9\nmov %r1, %r10\nadd %r1, -1\nmov %r2, 1\ncall 5\nexit", 9, nil},
		{"helper refuses a wild pointer", "mov %r1, 16\nmov %r2, 1\ncall 5\nexit", math.MaxUint64, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustLoad(t, tc.src, helpers).Run(nil)
			switch {
			case tc.name == "fail":
				if err == nil || err.Error() != "pc 0: helper says no" {
					t.Fatalf("err = %v", err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case err != nil || got != tc.want:
				t.Fatalf("r0 = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestCallFunction(t *testing.T) {
	// A bpf_loop-like helper: calls the callback in r1 r2 times with
	// (i, r3) and sums the results.
	helpers := vm.Helpers{181: {Name: "loop", Func: func(env *vm.Env, fn, n, arg, _, _ uint64) uint64 {
		var sum uint64
		for i := range n {
			r0, err := env.CallFunction(fn, [5]uint64{i, arg})
			if err != nil {
				env.Fail(err)
				return 0
			}
			sum += r0
		}
		return sum
	}}}
	insns := asm.MustAssemble(`
		mov %r6, 7
		mov %r2, 4
		mov %r3, 10
		lddw %r1, 0
		call 181
		add %r0, %r6   # r6 survives the callbacks
		exit
	cb:
		mov %r6, 1000
		mov %r0, %r1
		add %r0, %r2
		exit`)
	// lddw at slot 3 loads the address of cb at slot 8: 8 - (3+1).
	insns[3].Src, insns[3].Imm = asm.PseudoFunc, 4
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Run(nil)
	// (0+10)+(1+10)+(2+10)+(3+10) = 46, plus r6 = 7.
	if err != nil || got != 53 {
		t.Fatalf("r0 = %d, %v; want 53", got, err)
	}
}

func TestTailCalls(t *testing.T) {
	var target, loop *vm.Program
	helpers := vm.Helpers{12: {Name: "tail_call", Func: func(env *vm.Env, _, r2, _, _, _ uint64) uint64 {
		p := target
		if r2 == 1 {
			p = loop
		}
		if !env.TailCall(p) {
			return math.MaxUint64
		}
		return 0
	}}}
	target = mustLoad(t, "mov %r0, %r1\nexit", helpers) // returns the context pointer it got
	loop = mustLoad(t, "mov %r2, 1\ncall 12\nmov %r0, 33\nexit", helpers)
	ctx := make([]byte, 8)

	caller := mustLoad(t, "mov %r2, 0\ncall 12\nmov %r0, 1\nexit", helpers)
	if got, err := caller.Run(ctx); err != nil || got == 0 || got == 1 {
		t.Fatalf("tail call: r0 = %#x, %v; want the context address", got, err)
	}
	// A program that tail-calls itself stops after MaxTailCalls and
	// continues after the failed call.
	if got, err := loop.Run(ctx); err != nil || got != 33 {
		t.Fatalf("tail call loop: r0 = %d, %v; want 33", got, err)
	}
	// A tail call inside a bpf-to-bpf callee returns to the caller.
	nested := mustLoad(t, "call local f\nadd %r0, 1\nexit\nf:\nmov %r2, 0\ncall 12\nexit", helpers)
	if got, err := nested.Run(ctx); err != nil || got == 1 {
		t.Fatalf("nested tail call: r0 = %#x, %v", got, err)
	}
}

func TestPacketLoads(t *testing.T) {
	p := mustLoad(t, "ldabsh 2\nmov %r6, %r0\nmov %r7, 1\nldindb %r7, 3\nadd %r0, %r6\nexit", nil)
	env := vm.NewEnv()
	env.SetPacket([]byte{0, 0, 0x12, 0x34, 0x05})
	got, err := p.Exec(env)
	if err != nil || got != 0x1234+5 {
		t.Fatalf("r0 = %#x, %v", got, err)
	}
	env.SetPacket([]byte{1, 2})
	if got, err := p.Exec(env); err != nil || got != 0 {
		t.Fatalf("out of bounds: r0 = %#x, %v; want 0, nil", got, err)
	}
}

func TestReadOnlyRegion(t *testing.T) {
	p := mustLoad(t, "ldxb %r0, [%r1]\nstb [%r1], 1\nexit", nil)
	data := []byte{7}
	env := vm.NewEnv()
	env.AddBytes(data, false)
	env.SetArg(0, uint64(uintptrOf(data)))
	if _, err := p.Exec(env); !errors.Is(err, vm.ErrMemoryAccess) {
		t.Fatalf("err = %v, want a memory error for the store", err)
	}
}
