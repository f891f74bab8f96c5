package amd64

import (
	"bytes"
	"testing"

	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// The prepared sequences, patched as the compiler patches them, are what
// the encoder emits for the same instructions.
func TestSeqs(t *testing.T) {
	for n := 1; n <= 0x7f; n++ {
		var got, want x86.Asm
		start := got.EmitSeq(&chargeSeq)
		got.Bytes()[start+chargeImm] = byte(n)
		want.ALURI(x86.SUB, 8, budgetReg, int32(n))
		want.Jcc(x86.CondS)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("charge %d: % x, want % x", n, got.Bytes(), want.Bytes())
		}
	}
	for i, hot := range []int32{backend.OffHotReadLo, backend.OffHotWriteLo} {
		var want x86.Asm
		want.ALURM(x86.SUB, 8, tmpAddr, st(hot))
		want.ALURM(x86.CMP, 8, tmpAddr, st(hot+8))
		want.Jcc(x86.CondAE)
		var got x86.Asm
		got.EmitSeq(&hotChecks[i])
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("hot check %d: % x, want % x", i, got.Bytes(), want.Bytes())
		}
	}
	for _, pc := range []int32{0, 1, 0x7f, 0x80, 1 << 20, 1<<31 - 1} {
		var got, want x86.Asm
		got.Int3() // the call's target, at offset 0
		want.Int3()
		end := got.EmitSeq(&memStubSeq) + memStubSeq.Len()
		got.Patch32(end-9, pc)
		got.PatchRel32(end-4, 0)
		want.StoreImm(8, st(backend.OffExitPC), pc)
		want.PatchRel32(want.Call(), 0)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("memory stub at %d: % x, want % x", pc, got.Bytes(), want.Bytes())
		}
	}
}

// divMagic's copies of the code it emitted earlier are the code it emits
// afresh, whatever the order of the divisions (entries shared by divisors
// 16 apart, the same divisor with another register, size or operation).
func TestDivMagicCache(t *testing.T) {
	type div struct {
		mod, bmi2 bool
		size      int
		dst       x86.Reg
		imm       int32
	}
	var divs []div
	for _, imm := range []int32{3, 19, 3, 7, 23, -3, 1000003, 3} {
		for _, dst := range []x86.Reg{regMap[0], regMap[2], regMap[9]} {
			for _, size := range []int{4, 8, 4} {
				divs = append(divs, div{false, true, size, dst, imm}, div{true, true, size, dst, imm},
					div{false, false, size, dst, imm}, div{false, true, size, dst, imm})
			}
		}
	}
	cached := &compiler{a: x86.NewAsm(64), magic: new([16]magicEntry)}
	for i, d := range divs {
		fresh := &compiler{a: x86.NewAsm(64), magic: new([16]magicEntry), feat: features{bmi2: d.bmi2}}
		cached.feat = fresh.feat
		cached.a.Reset()
		okC := cached.divMagic(d.mod, d.size, d.dst, d.imm)
		okF := fresh.divMagic(d.mod, d.size, d.dst, d.imm)
		if okC != okF || !bytes.Equal(cached.a.Bytes(), fresh.a.Bytes()) {
			t.Fatalf("division %d %+v: %v % x, afresh %v % x", i, d, okC, cached.a.Bytes(), okF, fresh.a.Bytes())
		}
	}
}
