package verifier

import (
	"math/rand/v2"
	"testing"

	"github.com/uebpf/uebpf/asm"
)

// randScalar returns an abstract number and a concrete number it contains.
func randScalar(r *rand.Rand) (scalar, uint64) {
	interesting := []uint64{0, 1, 2, 7, 8, 15, 16, 31, 32, 63, 64, 255, 1 << 31, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, ^uint64(0), ^uint64(7)}
	pick := func() uint64 {
		if r.IntN(2) == 0 {
			return interesting[r.IntN(len(interesting))]
		}
		return r.Uint64() >> r.IntN(64)
	}
	x := pick()
	switch r.IntN(4) {
	case 0:
		return constScalar(x), x
	case 1:
		return unknownScalar(), x
	case 2:
		lo, hi := x, x+pick()%1000
		if hi < lo {
			hi = lo
		}
		return rangeScalar(lo, hi), lo + (hi-lo)/2
	default:
		mask := pick()
		return fromTnum(tnum{value: x &^ mask, mask: mask}), x
	}
}

func contains(s scalar, x uint64) bool {
	return s.t.value == x&^s.t.mask && s.umin <= x && x <= s.umax &&
		s.smin <= int64(x) && int64(x) <= s.smax
}

// TestALUSound checks on random inputs that the abstract result of every
// ALU operation contains the concrete one.
func TestALUSound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ops := []uint8{asm.AluADD, asm.AluSUB, asm.AluMUL, asm.AluDIV, asm.AluOR, asm.AluAND, asm.AluLSH,
		asm.AluRSH, asm.AluNEG, asm.AluMOD, asm.AluXOR, asm.AluARSH, asm.AluEND, asm.AluMOV}
	for i := 0; i < 200000; i++ {
		a, x := randScalar(r)
		b, y := randScalar(r)
		if !contains(a, x) || !contains(b, y) {
			t.Fatalf("generator: %v !∋ %#x or %v !∋ %#x", a, x, b, y)
		}
		op := ops[r.IntN(len(ops))]
		class := uint8(asm.ClassALU64)
		if r.IntN(2) == 0 {
			class = asm.ClassALU
		}
		ins := asm.Instruction{Opcode: class | op | asm.SourceX}
		switch op {
		case asm.AluDIV, asm.AluMOD:
			ins.Offset = int16(r.IntN(2))
		case asm.AluEND:
			ins.Imm = []int32{16, 32, 64}[r.IntN(3)]
			if r.IntN(2) == 0 {
				ins.Opcode &^= asm.SourceX
			}
		case asm.AluMOV:
			ins.Offset = []int16{8, 16, 32}[r.IntN(3)]
			if class == asm.ClassALU && ins.Offset == 32 {
				ins.Offset = 8
			}
			a, x = unknownScalar(), 0
		}
		got := aluScalar(ins, a, b)
		want := evalALU(ins, x, y)
		if !contains(got, want) {
			t.Fatalf("op %#x off %d imm %d: %v ∘ %v = %v, which lacks %#x (= %#x ∘ %#x)",
				ins.Opcode, ins.Offset, ins.Imm, a, b, got, want, x, y)
		}
	}
}

// TestRefineSound checks that narrowing on a branch keeps every pair of
// numbers that takes it.
func TestRefineSound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ops := []uint8{asm.JmpJEQ, asm.JmpJNE, asm.JmpJGT, asm.JmpJGE, asm.JmpJLT, asm.JmpJLE,
		asm.JmpJSGT, asm.JmpJSGE, asm.JmpJSLT, asm.JmpJSLE, asm.JmpJSET}
	for i := 0; i < 200000; i++ {
		a, x := randScalar(r)
		b, y := randScalar(r)
		op := ops[r.IntN(len(ops))]
		taken := asm.JumpTaken(op, x, y, true)
		switch outcome(op, a, b) {
		case alwaysTaken:
			if !taken {
				t.Fatalf("op %#x: %v vs %v decided taken, but %#x vs %#x is not", op, a, b, x, y)
			}
		case neverTaken:
			if taken {
				t.Fatalf("op %#x: %v vs %v decided not taken, but %#x vs %#x is", op, a, b, x, y)
			}
		}
		na, nb := a, b
		if !refine(op, taken, &na, &nb) || !contains(na, x) || !contains(nb, y) {
			t.Fatalf("op %#x taken=%v: %v, %v narrowed to %v, %v, losing %#x, %#x", op, taken, a, b, na, nb, x, y)
		}
	}
}
