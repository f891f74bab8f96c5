package arm64

// moveWide encodes MOVN (opc 0), MOVZ (2) and MOVK (3).
func moveWide(opc uint32, size int, rd Reg, imm16 uint16, shift uint8) (uint32, bool) {
	if shift&15 != 0 || int(shift) >= size*8 {
		return 0, false
	}
	return sf(size) | opc<<29 | 0x12800000 | uint32(shift/16)<<21 | uint32(imm16)<<5 | rd.zr(), true
}

// Movz emits "movz rd, #imm16, lsl #shift": rd = imm16<<shift. shift is
// 0 or 16 (and 32 or 48 for size 8).
func Movz(size int, rd Reg, imm16 uint16, shift uint8) (uint32, bool) {
	return moveWide(2, size, rd, imm16, shift)
}

// Movn emits "movn rd, #imm16, lsl #shift": rd = ^(imm16<<shift).
func Movn(size int, rd Reg, imm16 uint16, shift uint8) (uint32, bool) {
	return moveWide(0, size, rd, imm16, shift)
}

// Movk emits "movk rd, #imm16, lsl #shift": replace one halfword of rd.
func Movk(size int, rd Reg, imm16 uint16, shift uint8) (uint32, bool) {
	return moveWide(3, size, rd, imm16, shift)
}

// MovConstWords returns the shortest sequence this package knows that
// sets rd to v (for size 4, to the low 32 bits of v, clearing the upper
// half): one MOVZ, MOVN or ORR (logical immediate) when v allows, else
// MOVZ or MOVN followed by MOVKs for the halfwords they leave wrong, or
// ORR and one MOVK, whichever is shortest. It returns the words and their
// count (1 to 4). rd is one of X0 to X30.
func MovConstWords(size int, rd Reg, v uint64) (code [4]uint32, n int) {
	halves := 4
	if size == 4 {
		v &= 0xffffffff
		halves = 2
	} else {
		sf(size) // panics on a bad size
	}
	if rd > X30 { // ORR's destination 31 would be SP
		badReg(rd, "SP or XZR")
	}
	half := func(x uint64, i int) uint16 { return uint16(x >> (16 * i)) }

	// Count the halfwords MOVZ (zero) and MOVN (0xffff) get wrong.
	zeros, ones := 0, 0
	for i := range halves {
		switch half(v, i) {
		case 0:
			zeros++
		case 0xffff:
			ones++
		}
	}
	movzLen := max(halves-zeros, 1)
	movnLen := max(halves-ones, 1)

	// ORR from a logical immediate fixes everything in one instruction;
	// one MOVK after it fixes a single halfword, so try the base values
	// that differ from v in one halfword only, filled with a copy of
	// another halfword, zeros or ones (repeating patterns are where
	// logical immediates live).
	if IsLogicalImm(size, v) && movzLen > 1 && movnLen > 1 {
		w, _ := ALUImm(ORR, size, rd, XZR, v)
		code[0] = w
		return code, 1
	}
	if min(movzLen, movnLen) > 2 { // only 64-bit values get here
		for i := range halves {
			hole := uint64(0xffff) << (16 * i)
			for j := -2; j < halves; j++ {
				var fill uint64
				switch {
				case j == -2:
				case j == -1:
					fill = 0xffff
				case j == i:
					continue
				default:
					fill = uint64(half(v, j))
				}
				base := v&^hole | fill<<(16*i)
				if !IsLogicalImm(size, base) {
					continue
				}
				code[0], _ = ALUImm(ORR, size, rd, XZR, base)
				code[1], _ = Movk(size, rd, half(v, i), uint8(16*i))
				return code, 2
			}
		}
	}

	if movnLen < movzLen {
		// MOVN sets every halfword to 0xffff but the one it names.
		first := -1
		for i := range halves {
			if h := half(v, i); h != 0xffff {
				if first < 0 {
					first = i
					code[n], _ = Movn(size, rd, ^h, uint8(16*i))
				} else {
					code[n], _ = Movk(size, rd, h, uint8(16*i))
				}
				n++
			}
		}
		if n == 0 { // all ones
			code[0], _ = Movn(size, rd, 0, 0)
			n = 1
		}
		return code, n
	}
	for i := range halves {
		if h := half(v, i); h != 0 {
			if n == 0 {
				code[n], _ = Movz(size, rd, h, uint8(16*i))
			} else {
				code[n], _ = Movk(size, rd, h, uint8(16*i))
			}
			n++
		}
	}
	if n == 0 {
		code[0], _ = Movz(size, rd, 0, 0)
		n = 1
	}
	return code, n
}
