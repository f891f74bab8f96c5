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
}
