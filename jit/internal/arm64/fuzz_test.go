package arm64

import "testing"

// FuzzEncode feeds arbitrary operands to every form: each encoder must
// refuse exactly the unencodable ones, and what it accepts must decode
// (arm64asm) to the intended instruction. The LSE forms, which arm64asm
// cannot decode, are only checked for accepting the right operands here;
// TestEncodingsLLVM checks their words.
//
//	go test -run '^$' -fuzz FuzzEncode ./jit/internal/arm64
func FuzzEncode(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(1), uint8(2), uint8(3), uint8(0), uint8(0), uint8(0), uint8(1), uint64(0), int64(0))
	f.Add(uint8(3), uint8(31), uint8(31), uint8(2), uint8(3), uint8(1), uint8(1), uint8(0), uint8(0), uint64(4096), int64(-8))
	f.Add(uint8(13), uint8(5), uint8(31), uint8(2), uint8(3), uint8(7), uint8(1), uint8(0), uint8(1), uint64(1), int64(32760))
	f.Add(uint8(15), uint8(5), uint8(31), uint8(2), uint8(3), uint8(6), uint8(3), uint8(0), uint8(1), uint64(1), int64(1<<27-4))
	f.Fuzz(func(t *testing.T, formIndex, r0, r1, r2, r3, s0, s1, s2, size uint8, imm uint64, off int64) {
		all := len(forms) + len(lseForms)
		i := int(formIndex) % all
		o := opnd{r: [4]uint8{r0, r1, r2, r3}, sel: [3]uint8{s0, s1, s2}, size: size, imm: imm, off: off}
		var c encCase
		var name string
		if i < len(forms) {
			c, name = forms[i].gen(o), forms[i].name
		} else {
			c, name = lseForms[i-len(forms)].gen(o), lseForms[i-len(forms)].name
		}
		if msg := check(c); msg != "" {
			t.Fatalf("%s: %s: %#08x %s", name, c.desc, c.word, msg)
		}
	})
}
