package arm64

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// disasm decodes w with arm64asm, in GNU syntax.
func disasm(w uint32) (string, error) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], w)
	inst, err := arm64asm.Decode(b[:])
	if err != nil {
		return "", err
	}
	return normalize(arm64asm.GNUSyntax(inst)), nil
}

// check reports what is wrong with c as decoded by arm64asm, or "".
func check(c encCase) string {
	switch {
	case c.ok != c.wantOK:
		return "accepted " + map[bool]string{true: "an unencodable operand", false: "nothing: refused encodable operands"}[c.ok] + " (" + c.want + ")"
	case !c.ok || c.llvm:
		return ""
	}
	got, err := disasm(c.word)
	if err != nil {
		return "does not decode: " + err.Error() + ", want " + c.want
	}
	if got != c.want {
		return "decodes as " + got + ", want " + c.want
	}
	return ""
}

// randOpnd draws operands, with immediates biased towards the edges of
// the encodable ranges.
func randOpnd(rng *rand.Rand) opnd {
	var o opnd
	for i := range o.r {
		o.r[i] = uint8(rng.Uint32())
	}
	for i := range o.sel {
		o.sel[i] = uint8(rng.Uint32())
	}
	o.size = uint8(rng.Uint32())
	o.imm = rng.Uint64() >> rng.UintN(64)
	o.off = int64(rng.Uint64()) >> rng.UintN(64)
	if rng.UintN(4) == 0 {
		edges := []int64{0, 1, -1, 3, 4, 8, -8, 255, 256, -256, -257, 4095, 4096, 1 << 12 * 4095, 1 << 14, 1<<15 - 4, -1 << 15, 1<<20 - 4, -1 << 20, 1 << 20, 1<<27 - 4, -1 << 27, 1 << 27, 1 << 32, -1 << 32}
		o.off = edges[rng.IntN(len(edges))]
		o.imm = uint64(o.off)
	}
	return o
}

// TestEncodingsRandom runs every form on random operands and checks the
// words against arm64asm. The table of fixed cases is TestEncodingsTable.
func TestEncodingsRandom(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for _, f := range forms {
		failures, accepted := 0, 0
		for range n {
			c := f.gen(randOpnd(rng))
			if c.ok {
				accepted++
			}
			if msg := check(c); msg != "" {
				t.Errorf("%s: %s: %#08x %s", f.name, c.desc, c.word, msg)
				if failures++; failures > 10 {
					t.Fatalf("%s: too many failures", f.name)
				}
			}
			checked++
		}
		// A form whose operands are almost never encodable tests little.
		if accepted < n/4 {
			t.Errorf("%s: only %d of %d random operands encodable", f.name, accepted, n)
		}
	}
	t.Logf("%d random encodings checked", checked)
}
