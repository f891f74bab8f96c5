package arm64

import "testing"

// FuzzEncode feeds arbitrary operands to every form: each encoder must
// refuse exactly the unencodable ones, and what it accepts must decode
// (arm64asm) to the intended instruction. The LSE forms, which arm64asm
// cannot decode, are only checked for accepting the right operands here;
// TestEncodingsLLVM checks their words.
//
//	go test -run '^$' -fuzz '^FuzzEncode$' ./jit/internal/arm64
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

// FuzzMovConst checks that MovConstWords sets the register to any value,
// as arm64asm reads the sequence, in no more instructions than MOVZ or
// MOVN and MOVKs would take.
func FuzzMovConst(f *testing.F) {
	f.Add(uint64(0x123456789abcdef0), false)
	f.Add(uint64(0x5555555555551234), false)
	f.Add(uint64(0xfffffffe), true)
	f.Fuzz(func(t *testing.T, v uint64, w32 bool) {
		size := 8
		if w32 {
			size, v = 4, v&0xffffffff
		}
		code, n := MovConstWords(size, X9, v)
		if got := evalMov(t, size, code[:n]); got != v {
			t.Fatalf("size %d: MovConst(%#x) = %#x", size, v, got)
		}
		zeros, ones := 0, 0
		for i := range size / 2 {
			switch uint16(v >> (16 * i)) {
			case 0:
				zeros++
			case 0xffff:
				ones++
			}
		}
		if plain := max(1, size/2-max(zeros, ones)); n > plain {
			t.Fatalf("size %d: MovConst(%#x) takes %d instructions, MOVZ/MOVN %d", size, v, n, plain)
		}
	})
}
