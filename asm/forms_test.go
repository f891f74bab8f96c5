package asm

import "testing"

// sample builds an instruction for f with every operand field set to a
// value that is not zero, so dropped fields show up.
func sample(f *form) []Instruction {
	ins := Instruction{Opcode: f.opcode, Src: f.src, Offset: f.off, Imm: f.imm}
	next := Instruction{}
	for _, o := range f.operands {
		switch o {
		case opDst:
			ins.Dst = 3
		case opSrc:
			ins.Src = 10
		case opImm:
			ins.Imm = -123456
		case opImm64:
			ins.Imm, next.Imm = -2, 0x7654321
		case opPseudo:
			ins.Imm, next.Imm = 9, -16
		case opDstMem:
			ins.Dst, ins.Offset = 10, -8
		case opSrcMem:
			ins.Src, ins.Offset = 1, 32767
		case opJump:
			ins.Offset = -32768
		case opJump32:
			ins.Imm = 1 << 20
		}
	}
	if f.opcode == OpLDDW {
		return []Instruction{ins, next}
	}
	return []Instruction{ins}
}

func TestEveryFormRoundTrips(t *testing.T) {
	for name, forms := range formsByName {
		for _, f := range forms {
			want := sample(f)
			if !f.alias {
				if got, _ := matchForm(want[0]); got != f {
					t.Errorf("%s (opcode %#02x): decodes as %v, want itself", f.usage(), f.opcode, got)
					continue
				}
			}
			text := Format(want, 0)
			got, err := Assemble(text)
			if err != nil {
				t.Errorf("%s: Format gave %q, which does not assemble: %v", name, text, err)
				continue
			}
			if len(got) != len(want) || got[0] != want[0] || len(want) == 2 && got[1] != want[1] {
				t.Errorf("%s: %q assembles to %+v, want %+v", name, text, got, want)
			}
		}
	}
}

func TestFormTableHasNoDuplicateEncodings(t *testing.T) {
	type key struct {
		opcode, src uint8
		off         int16
		imm         int32
		fields      int
	}
	seen := map[key]string{}
	for _, forms := range formsByOpcode {
		for _, f := range forms {
			k := key{f.opcode, f.src, f.off, f.imm, f.fields()}
			if prev, dup := seen[k]; dup {
				t.Errorf("%s and %s encode the same way", prev, f.usage())
			}
			seen[k] = f.usage()
		}
	}
}

// TestOpcodeCoverage pins the set of opcodes the assembler knows, so that a
// table edit that drops one is noticed. RFC 9669 plus Linux ISA v4:
//   - ALU and ALU64: 12 operations x imm/reg, neg = 25 each, plus le, be
//     and bswap = 53
//   - JMP: 11 conditions x imm/reg, ja, call, callx, exit = 26;
//     JMP32: 22 conditions, ja32 = 23
//   - lddw, ldx x4, st x4, stx x4, ldxs x3, ldabs x3, ldind x3, atomic x2 = 24
func TestOpcodeCoverage(t *testing.T) {
	if n := len(formsByOpcode); n != 53+26+23+24 {
		t.Errorf("%d opcodes have forms, want %d", n, 53+26+23+24)
	}
}
