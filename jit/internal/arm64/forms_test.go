package arm64

import (
	"fmt"
	"strings"
)

// This file describes every encoder as a form: given operands, it returns
// the word the encoder produced, whether the encoder should have accepted
// the operands (decided here independently of the encoder) and the text a
// disassembler prints for the intended instruction. The table test, the
// randomized test, the fuzz target and the llvm-mc test all run forms.

// opnd holds the raw operands of a form: register numbers (mapped into
// a pool by each form), an unsigned and a signed immediate, and small
// selectors.
type opnd struct {
	r    [4]uint8
	imm  uint64
	off  int64
	sel  [3]uint8 // operation, shift kind, condition, size...
	size uint8
}

// encCase is one encoding to check.
type encCase struct {
	word   uint32
	ok     bool   // the encoder accepted the operands
	wantOK bool   // they are encodable
	want   string // GNU syntax, as arm64asm or llvm-mc prints it
	llvm   bool   // arm64asm cannot decode it (LSE): check with llvm-mc
	desc   string // the call, for failure messages
}

// regName returns the name of r as an operand of the given size.
func regName(size int, r Reg) string {
	switch {
	case r == SP && size == 4:
		return "wsp"
	case r == XZR && size == 4:
		return "wzr"
	case size == 4:
		return fmt.Sprintf("w%d", r)
	}
	return r.String()
}

func hex(v uint64) string { return fmt.Sprintf("#%#x", v) }

// addSubOK reports whether imm fits ADD/SUB: 12 bits, maybe shifted by 12.
func addSubOK(imm uint64) bool { return imm < 4096 || imm%4096 == 0 && imm>>12 < 4096 }

// addSubText formats an ADD/SUB immediate.
func addSubText(imm uint64) string {
	if imm < 4096 {
		return hex(imm)
	}
	return hex(imm>>12) + ", lsl #12"
}

// pcrel formats a PC-relative target the way arm64asm does (offset from
// the instruction, negative ones as 64-bit unsigned).
func pcrel(off int64) string { return fmt.Sprintf(".+%#x", uint64(off)) }

// Register pools an operand byte picks from.
var (
	gprs   = regRange(X0, X30) // no register 31
	gprsZR = append(regRange(X0, X30), XZR)
	gprsSP = append(regRange(X0, X30), SP)
)

func regRange(lo, hi Reg) []Reg {
	var rs []Reg
	for r := lo; r <= hi; r++ {
		rs = append(rs, r)
	}
	return rs
}

func pick(pool []Reg, b uint8) Reg { return pool[int(b)%len(pool)] }

func opSize(b uint8) int { return 4 << (b & 1) }

var aluNames = [...]string{ADD: "add", ADDS: "adds", SUB: "sub", SUBS: "subs", AND: "and", ORR: "orr", EOR: "eor", ANDS: "ands", BIC: "bic", ORN: "orn", EON: "eon", BICS: "bics"}

var shiftNames = [...]string{LSL: "lsl", LSR: "lsr", ASR: "asr", ROR: "ror"}

// condNames are arm64asm's names; it prints NV (which also means always)
// as "al".
var condNames = [...]string{"eq", "ne", "cs", "cc", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al", "al"}

// logicalImms is every logical immediate, by size, built from the
// definition (an e-bit element of s ones rotated by r, replicated) rather
// than from the encoder.
var logicalImms = func() map[int]map[uint64]bool {
	m := map[int]map[uint64]bool{4: {}, 8: {}}
	for e := uint(2); e <= 64; e *= 2 {
		for s := uint(1); s < e; s++ {
			for r := uint(0); r < e; r++ {
				elem := uint64(1)<<s - 1
				if r != 0 {
					elem = (elem>>r | elem<<(e-r)) & (^uint64(0) >> (64 - e))
				}
				v := elem
				for w := e; w < 64; w *= 2 {
					v |= v << w
				}
				m[8][v] = true
				if e <= 32 {
					m[4][v&0xffffffff] = true
				}
			}
		}
	}
	return m
}()

// sortedLogicalImms lists logicalImms[8] for drawing valid immediates.
var logicalImmList = func() []uint64 {
	var l []uint64
	for v := range logicalImms[8] {
		l = append(l, v)
	}
	return l
}()

type form struct {
	name string
	gen  func(o opnd) encCase
}

// catch turns an encoder's panic (a register in the wrong slot) into a
// case that fails with the panic's message.
func catch(c *encCase) {
	if r := recover(); r != nil {
		c.want = fmt.Sprint("panic: ", r)
		c.ok, c.wantOK = false, true
	}
}

var forms = []form{
	{"ALUReg", func(o opnd) (c encCase) {
		defer catch(&c)
		op, size := ALUOp(o.sel[0]%12), opSize(o.size)
		rd, rn, rm := pick(gprs, o.r[0]), pick(gprs, o.r[1]), pick(gprs, o.r[2])
		c.word, c.ok = ALUReg(op, size, rd, rn, rm), true
		c.wantOK = true
		c.want = fmt.Sprintf("%s %s, %s, %s", aluNames[op], regName(size, rd), regName(size, rn), regName(size, rm))
		c.desc = fmt.Sprintf("ALUReg(%s, %d, %v, %v, %v)", aluNames[op], size, rd, rn, rm)
		return
	}},
	{"ALUReg SP", func(o opnd) (c encCase) {
		defer catch(&c)
		op, size := ALUOp(o.sel[0]%4), opSize(o.size)
		rd, rn, rm := pick(gprs, o.r[0]), SP, pick(gprs, o.r[2])
		if o.sel[1]&1 == 1 && !op.setsFlags() {
			rd, rn = SP, pick(gprs, o.r[1])
		}
		c.word, c.ok, c.wantOK = ALUReg(op, size, rd, rn, rm), true, true
		c.want = fmt.Sprintf("%s %s, %s, %s", aluNames[op], regName(size, rd), regName(size, rn), regName(size, rm))
		c.desc = fmt.Sprintf("ALUReg(%s, %d, %v, %v, %v)", aluNames[op], size, rd, rn, rm)
		return
	}},
	{"ALUShifted", func(o opnd) (c encCase) {
		defer catch(&c)
		op, size := ALUOp(o.sel[0]%12), opSize(o.size)
		sh, amount := Shift(o.sel[1]%4), o.sel[2]%72
		rd, rn, rm := pick(gprs, o.r[0]), pick(gprs, o.r[1]), pick(gprs, o.r[2])
		c.word, c.ok = ALUShifted(op, size, rd, rn, rm, sh, amount)
		c.wantOK = int(amount) < size*8 && (sh != ROR || op >= AND)
		c.want = fmt.Sprintf("%s %s, %s, %s", aluNames[op], regName(size, rd), regName(size, rn), regName(size, rm))
		if sh != LSL || amount != 0 {
			c.want += fmt.Sprintf(", %s #%d", shiftNames[sh], amount)
		}
		c.desc = fmt.Sprintf("ALUShifted(%s, %d, %v, %v, %v, %s, %d)", aluNames[op], size, rd, rn, rm, shiftNames[sh], amount)
		return
	}},
	{"ALUImm add/sub", func(o opnd) (c encCase) {
		defer catch(&c)
		op, size := ALUOp(o.sel[0]%4), opSize(o.size)
		rd, rn := pick(gprsSP, o.r[0]), pick(gprsSP, o.r[1])
		if op.setsFlags() {
			rd = pick(gprs, o.r[0])
		}
		imm := o.imm
		switch o.sel[1] % 4 { // mostly in range
		case 0:
			imm &= 0xfff
		case 1:
			imm &= 0xfff000
		}
		c.word, c.ok = ALUImm(op, size, rd, rn, imm)
		c.wantOK = addSubOK(imm)
		if imm == 0 && (rd == SP || rn == SP) && op == ADD {
			c.want = fmt.Sprintf("mov %s, %s", regName(size, rd), regName(size, rn))
		} else {
			c.want = fmt.Sprintf("%s %s, %s, %s", aluNames[op], regName(size, rd), regName(size, rn), addSubText(imm))
		}
		c.desc = fmt.Sprintf("ALUImm(%s, %d, %v, %v, %#x)", aluNames[op], size, rd, rn, imm)
		return
	}},
	{"ALUImm logical", func(o opnd) (c encCase) {
		defer catch(&c)
		op, size := AND+ALUOp(o.sel[0]%4), opSize(o.size)
		rd, rn := pick(gprsSP, o.r[0]), pick(gprs, o.r[1])
		if op.setsFlags() {
			rd = pick(gprs, o.r[0])
		}
		imm := o.imm
		if o.sel[1]%2 == 0 { // mostly valid
			imm = logicalImmList[imm%uint64(len(logicalImmList))]
			if size == 4 && o.sel[1]%4 == 0 {
				imm &= 0xffffffff
			}
		}
		c.word, c.ok = ALUImm(op, size, rd, rn, imm)
		c.wantOK = logicalImms[size][imm]
		c.want = fmt.Sprintf("%s %s, %s, %s", aluNames[op], regName(size, rd), regName(size, rn), hex(imm))
		c.desc = fmt.Sprintf("ALUImm(%s, %d, %v, %v, %#x)", aluNames[op], size, rd, rn, imm)
		return
	}},
	{"AddImm", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		rd, rn := pick(gprsSP, o.r[0]), pick(gprs, o.r[1])
		imm := o.off % 5000
		c.word, c.ok = AddImm(size, rd, rn, imm)
		name, abs := "add", imm
		if imm < 0 {
			name, abs = "sub", -imm
		}
		c.wantOK = addSubOK(uint64(abs))
		c.want = fmt.Sprintf("%s %s, %s, %s", name, regName(size, rd), regName(size, rn), addSubText(uint64(abs)))
		if imm == 0 && rd == SP {
			c.want = fmt.Sprintf("mov %s, %s", regName(size, rd), regName(size, rn))
		}
		c.desc = fmt.Sprintf("AddImm(%d, %v, %v, %d)", size, rd, rn, imm)
		return
	}},
	{"CmpImm", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		rn := pick(gprsSP, o.r[0])
		imm := o.off % 5000
		c.word, c.ok = CmpImm(size, rn, imm)
		name, abs := "cmp", imm
		if imm < 0 {
			name, abs = "cmn", -imm
		}
		c.wantOK = addSubOK(uint64(abs))
		c.want = fmt.Sprintf("%s %s, %s", name, regName(size, rn), addSubText(uint64(abs)))
		c.desc = fmt.Sprintf("CmpImm(%d, %v, %d)", size, rn, imm)
		return
	}},
	{"mul/div/shift register", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		rd, rn, rm, ra := pick(gprs, o.r[0]), pick(gprs, o.r[1]), pick(gprs, o.r[2]), pick(gprs, o.r[3])
		c.ok, c.wantOK = true, true
		name := ""
		switch o.sel[0] % 10 {
		case 0:
			c.word, name = Mul(size, rd, rn, rm), "mul"
		case 1:
			c.word, name = Madd(size, rd, rn, rm, ra), "madd"
		case 2:
			c.word, name = Msub(size, rd, rn, rm, ra), "msub"
		case 3:
			c.word, name = Udiv(size, rd, rn, rm), "udiv"
		case 4:
			c.word, name = Sdiv(size, rd, rn, rm), "sdiv"
		case 5, 6, 7, 8:
			sh := Shift(o.sel[0]%10 - 5)
			c.word, name = ShiftReg(sh, size, rd, rn, rm), shiftNames[sh]
		case 9:
			size = 8
			if o.sel[1]&1 == 0 {
				c.word, name = Umulh(rd, rn, rm), "umulh"
			} else {
				c.word, name = Smulh(rd, rn, rm), "smulh"
			}
		}
		c.want = fmt.Sprintf("%s %s, %s, %s", name, regName(size, rd), regName(size, rn), regName(size, rm))
		if name == "madd" || name == "msub" {
			c.want += ", " + regName(size, ra)
		}
		c.desc = c.want
		return
	}},
	{"one source", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		rd, rn := pick(gprs, o.r[0]), pick(gprsZR, o.r[1])
		dsize, ssize := size, size
		c.ok, c.wantOK = true, true
		name := ""
		switch o.sel[0] % 11 {
		case 0:
			c.word, name = Sxtb(size, rd, rn), "sxtb"
			ssize = 4
		case 1:
			c.word, name = Sxth(size, rd, rn), "sxth"
			ssize = 4
		case 2:
			c.word, name, dsize, ssize = Sxtw(rd, rn), "sxtw", 8, 4
		case 3:
			c.word, name, dsize, ssize = Uxtb(rd, rn), "uxtb", 4, 4
		case 4:
			c.word, name, dsize, ssize = Uxth(rd, rn), "uxth", 4, 4
		case 5:
			c.word, name = Rev16(size, rd, rn), "rev16"
		case 6:
			c.word, name, dsize, ssize = Rev32(rd, rn), "rev32", 8, 8
		case 7:
			c.word, name = Rev(size, rd, rn), "rev"
		case 8:
			c.word, name = Clz(size, rd, rn), "clz"
		case 9:
			c.word, name = Neg(size, rd, rn), "neg"
		case 10:
			c.word, name = Mvn(size, rd, rn), "mvn"
		}
		c.want = fmt.Sprintf("%s %s, %s", name, regName(dsize, rd), regName(ssize, rn))
		c.desc = c.want
		return
	}},
	{"Mov", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		pool := gprsZR
		if o.sel[0]&1 == 1 {
			pool = gprsSP
		}
		rd, rm := pick(pool, o.r[0]), pick(pool, o.r[1])
		if rd == XZR {
			rd = X7
		}
		c.word, c.ok, c.wantOK = Mov(size, rd, rm), true, true
		c.want = fmt.Sprintf("mov %s, %s", regName(size, rd), regName(size, rm))
		c.desc = fmt.Sprintf("Mov(%d, %v, %v)", size, rd, rm)
		return
	}},
	{"ShiftImm", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		sh, amount := Shift(o.sel[0]%3), o.sel[1]%80
		rd, rn := pick(gprs, o.r[0]), pick(gprsZR, o.r[1])
		c.word, c.ok = ShiftImm(sh, size, rd, rn, amount)
		c.wantOK = int(amount) < size*8
		name := shiftNames[sh]
		if sh == LSL && amount == 0 {
			name = "lsr" // UBFM #0, #63 reads as the LSR alias
		}
		c.want = fmt.Sprintf("%s %s, %s, #%d", name, regName(size, rd), regName(size, rn), amount)
		c.desc = fmt.Sprintf("ShiftImm(%s, %d, %v, %v, %d)", shiftNames[sh], size, rd, rn, amount)
		return
	}},
	{"Ubfx", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		lsb, width := o.sel[0]%70, o.sel[1]%70
		rd, rn := pick(gprs, o.r[0]), pick(gprs, o.r[1])
		c.word, c.ok = Ubfx(size, rd, rn, lsb, width)
		c.wantOK = width > 0 && int(lsb)+int(width) <= size*8
		switch {
		case int(lsb)+int(width) == size*8:
			c.want = fmt.Sprintf("lsr %s, %s, #%d", regName(size, rd), regName(size, rn), lsb)
		case size == 4 && lsb == 0 && (width == 8 || width == 16):
			c.want = fmt.Sprintf("uxt%c %s, %s", "bh"[width/16], regName(size, rd), regName(size, rn))
		default:
			c.want = fmt.Sprintf("ubfx %s, %s, #%d, #%d", regName(size, rd), regName(size, rn), lsb, width)
		}
		c.desc = fmt.Sprintf("Ubfx(%d, %v, %v, %d, %d)", size, rd, rn, lsb, width)
		return
	}},
	{"move wide", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		rd := pick(gprsZR, o.r[0])
		imm16, shift := uint16(o.imm), o.sel[1]%4*16
		if o.sel[2]%8 == 0 {
			shift = o.sel[1] % 70
		}
		c.wantOK = int(shift) < size*8 && shift%16 == 0
		mask := ^uint64(0) >> (64 - 8*size)
		v := uint64(imm16) << shift
		explicit := imm16 == 0 && shift != 0
		lsl := ""
		if shift != 0 {
			lsl = fmt.Sprintf(", lsl #%d", shift)
		}
		switch o.sel[0] % 3 {
		case 0:
			c.word, c.ok = Movz(size, rd, imm16, shift)
			c.want = fmt.Sprintf("mov %s, %s", regName(size, rd), hex(v))
			if explicit {
				c.want = fmt.Sprintf("movz %s, %s%s", regName(size, rd), hex(uint64(imm16)), lsl)
			}
		case 1:
			c.word, c.ok = Movn(size, rd, imm16, shift)
			c.want = fmt.Sprintf("mov %s, %s", regName(size, rd), hex(^v&mask))
			if explicit || size == 4 && imm16 == 0xffff {
				c.want = fmt.Sprintf("movn %s, %s%s", regName(size, rd), hex(uint64(imm16)), lsl)
			}
		case 2:
			c.word, c.ok = Movk(size, rd, imm16, shift)
			c.want = fmt.Sprintf("movk %s, %s%s", regName(size, rd), hex(uint64(imm16)), lsl)
		}
		c.desc = c.want
		return
	}},
	{"load/store", func(o opnd) (c encCase) {
		defer catch(&c)
		size := 1 << (o.size % 4)
		if o.sel[2]%16 == 0 {
			size = int(o.size % 10)
		}
		rt, rn, rm := pick(gprsZR, o.r[0]), pick(gprsSP, o.r[1]), pick(gprsZR, o.r[2])
		off := o.off
		switch o.sel[1] % 4 {
		case 0:
			off %= 300
		case 1:
			off = off % 4096 * int64(max(size, 1))
		case 2:
			off %= 0x10000
		}
		kind := o.sel[0] % 3 // 0 store, 1 load, 2 sign-extending load
		form := o.sel[0] / 3 % 4
		validSize := size == 1 || size == 2 || size == 4 || size == 8
		validSize = validSize && (kind != 2 || size < 8)
		scaledOK := validSize && off >= 0 && off%int64(size) == 0 && off/int64(size) < 4096
		unscaledOK := validSize && off >= -256 && off <= 255
		var encs = [3][4]func() (uint32, bool){
			{func() (uint32, bool) { return StrImm(size, rt, rn, off) }, func() (uint32, bool) { return Stur(size, rt, rn, off) }, func() (uint32, bool) { return StrReg(size, rt, rn, rm) }, func() (uint32, bool) { return Store(size, rt, rn, off) }},
			{func() (uint32, bool) { return LdrImm(size, rt, rn, off) }, func() (uint32, bool) { return Ldur(size, rt, rn, off) }, func() (uint32, bool) { return LdrReg(size, rt, rn, rm) }, func() (uint32, bool) { return Load(size, rt, rn, off) }},
			{func() (uint32, bool) { return LdrsImm(size, rt, rn, off) }, func() (uint32, bool) { return Ldurs(size, rt, rn, off) }, func() (uint32, bool) { return LdrsReg(size, rt, rn, rm) }, func() (uint32, bool) { return LoadSX(size, rt, rn, off) }},
		}
		c.word, c.ok = encs[kind][form]()
		unscaled := false
		switch form {
		case 0:
			c.wantOK = scaledOK
		case 1:
			c.wantOK, unscaled = unscaledOK, true
		case 2:
			c.wantOK = validSize
		case 3:
			c.wantOK, unscaled = scaledOK || unscaledOK, !scaledOK
		}
		name := [3]string{"str", "ldr", "ldrs"}[kind]
		if unscaled {
			name = [3]string{"stur", "ldur", "ldurs"}[kind]
		}
		rsize := 4
		switch {
		case kind == 2 || size == 8:
			rsize = 8
		}
		switch size {
		case 1:
			name += "b"
		case 2:
			name += "h"
		case 4:
			if kind == 2 {
				name += "w"
			}
		}
		addr := fmt.Sprintf("[%s,#%d]", regName(8, rn), off)
		if off == 0 {
			addr = fmt.Sprintf("[%s]", regName(8, rn))
		}
		if form == 2 {
			addr = fmt.Sprintf("[%s,%s]", regName(8, rn), regName(8, rm))
		}
		c.want = fmt.Sprintf("%s %s, %s", name, regName(rsize, rt), addr)
		c.desc = fmt.Sprintf("load/store kind %d form %d size %d %v %v %v off %d", kind, form, size, rt, rn, rm, off)
		return
	}},
	{"pair", func(o opnd) (c encCase) {
		defer catch(&c)
		size := 4 << (o.size % 2)
		if o.sel[2]%16 == 0 {
			size = int(o.size % 10)
		}
		load := o.sel[0]&1 == 1
		mode := AddrMode(o.sel[1] % 4)
		rt1, rt2, rn := pick(gprsZR, o.r[0]), pick(gprsZR, o.r[1]), pick(gprsSP, o.r[2])
		off := o.off
		if o.sel[2]%4 != 1 {
			off = off % 64 * int64(max(size, 1))
		}
		if load {
			c.word, c.ok = Ldp(size, rt1, rt2, rn, off, mode)
		} else {
			c.word, c.ok = Stp(size, rt1, rt2, rn, off, mode)
		}
		c.wantOK = (size == 4 || size == 8) && mode != 0 && off%int64(size) == 0 &&
			off/int64(size) >= -64 && off/int64(size) < 64 &&
			!(mode != Offset && (rt1 == rn || rt2 == rn)) && !(load && rt1 == rt2)
		name := "stp"
		if load {
			name = "ldp"
		}
		var addr string
		switch {
		case mode == PostIndex:
			addr = fmt.Sprintf("[%s],#%d", regName(8, rn), off)
		case mode == PreIndex:
			addr = fmt.Sprintf("[%s,#%d]!", regName(8, rn), off)
		case off == 0:
			addr = fmt.Sprintf("[%s]", regName(8, rn))
		default:
			addr = fmt.Sprintf("[%s,#%d]", regName(8, rn), off)
		}
		c.want = fmt.Sprintf("%s %s, %s, %s", name, regName(size, rt1), regName(size, rt2), addr)
		c.desc = fmt.Sprintf("%s(%d, %v, %v, %v, %d, mode %d)", name, size, rt1, rt2, rn, off, mode)
		return
	}},
	{"branch", func(o opnd) (c encCase) {
		defer catch(&c)
		off := o.off
		switch o.sel[1] % 4 {
		case 0:
			off %= 1 << 14
		case 1:
			off %= 1 << 19
		case 2:
			off %= 1 << 28
		}
		if o.sel[2]%8 != 0 {
			off &^= 3
		}
		aligned := off&3 == 0
		in := func(limit int64) bool { return aligned && off >= -limit && off < limit }
		rt := pick(gprsZR, o.r[0])
		size := opSize(o.size)
		cond := Cond(o.sel[2] % 16)
		bit := o.r[1] % 70
		switch o.sel[0] % 9 {
		case 0:
			c.word, c.ok = B(off)
			c.wantOK, c.want = in(1<<27), "b "+pcrel(off)
		case 1:
			c.word, c.ok = BL(off)
			c.wantOK, c.want = in(1<<27), "bl "+pcrel(off)
		case 2:
			c.word, c.ok = BCond(cond, off)
			c.wantOK, c.want = in(1<<20), "b."+condNames[cond]+" "+pcrel(off)
		case 3:
			c.word, c.ok = Cbz(size, rt, off)
			c.wantOK, c.want = in(1<<20), "cbz "+regName(size, rt)+", "+pcrel(off)
		case 4:
			c.word, c.ok = Cbnz(size, rt, off)
			c.wantOK, c.want = in(1<<20), "cbnz "+regName(size, rt)+", "+pcrel(off)
		case 5, 6:
			name := "tbz"
			if o.sel[0]%9 == 5 {
				c.word, c.ok = Tbz(rt, bit, off)
			} else {
				c.word, c.ok = Tbnz(rt, bit, off)
				name = "tbnz"
			}
			c.wantOK = in(1<<15) && bit < 64
			c.want = fmt.Sprintf("%s %s, #%d, %s", name, regName(4<<(bit/32), rt), bit, pcrel(off))
		case 7:
			c.word, c.ok = Adr(rt, o.off%(1<<21))
			off = o.off % (1 << 21)
			c.wantOK, c.want = off >= -1<<20 && off < 1<<20, "adr "+regName(8, rt)+", "+pcrel(off)
		case 8:
			off = o.off % (1 << 33)
			if o.sel[2]%8 != 0 {
				off &^= 0xfff
			}
			c.word, c.ok = Adrp(rt, off)
			c.wantOK, c.want = off&0xfff == 0 && off >= -1<<32 && off < 1<<32, "adrp "+regName(8, rt)+", "+pcrel(off)
		}
		c.desc = c.want
		return
	}},
	{"csel", func(o opnd) (c encCase) {
		defer catch(&c)
		size := opSize(o.size)
		rd, rn, rm := pick(gprsZR, o.r[0]), pick(gprsZR, o.r[1]), pick(gprsZR, o.r[2])
		if o.sel[1]%4 == 0 {
			rm = rn // the aliases
		}
		cond := Cond(o.sel[2] % 16)
		c.ok, c.wantOK = true, true
		op := o.sel[0] % 5
		names := [...]string{"csel", "csinc", "csinv", "csneg"}
		switch op {
		case 0:
			c.word = Csel(size, rd, rn, rm, cond)
		case 1:
			c.word = Csinc(size, rd, rn, rm, cond)
		case 2:
			c.word = Csinv(size, rd, rn, rm, cond)
		case 3:
			c.word = Csneg(size, rd, rn, rm, cond)
		case 4:
			c.word, c.ok = Cset(size, rd, cond)
			c.wantOK = cond < AL
			c.want = fmt.Sprintf("cset %s, %s", regName(size, rd), condNames[cond])
			c.desc = c.want
			return
		}
		switch {
		case op != 0 && rn == rm && cond < AL && rn == XZR && op != 3:
			c.want = fmt.Sprintf("%s %s, %s", [...]string{1: "cset", 2: "csetm"}[op], regName(size, rd), condNames[cond^1])
		case op != 0 && rn == rm && cond < AL:
			c.want = fmt.Sprintf("%s %s, %s, %s", [...]string{1: "cinc", 2: "cinv", 3: "cneg"}[op], regName(size, rd), regName(size, rn), condNames[cond^1])
		default:
			c.want = fmt.Sprintf("%s %s, %s, %s, %s", names[op], regName(size, rd), regName(size, rn), regName(size, rm), condNames[cond])
		}
		c.desc = c.want
		return
	}},
	{"exclusive and ordered", func(o opnd) (c encCase) {
		defer catch(&c)
		size := 4 << (o.size % 2)
		if o.sel[2]%16 == 0 {
			size = int(o.size % 10)
		}
		rs, rt, rn := pick(gprsZR, o.r[0]), pick(gprsZR, o.r[1]), pick(gprsSP, o.r[2])
		ordered := o.sel[1]&1 == 1
		wordOK := size == 4 || size == 8
		anyOK := wordOK || size == 1 || size == 2
		suffix := map[int]string{1: "b", 2: "h"}[size]
		rsize := 4
		if size == 8 {
			rsize = 8
		}
		switch o.sel[0] % 4 {
		case 0:
			c.word, c.ok = Ldxr(ordered, size, rt, rn)
			c.wantOK = wordOK
			c.want = fmt.Sprintf("ld%sxr %s, [%s]", map[bool]string{true: "a"}[ordered], regName(rsize, rt), regName(8, rn))
		case 1:
			c.word, c.ok = Stxr(ordered, size, rs, rt, rn)
			c.wantOK = wordOK && rs != rt && rs != rn
			c.want = fmt.Sprintf("st%sxr %s, %s, [%s]", map[bool]string{true: "l"}[ordered], regName(4, rs), regName(rsize, rt), regName(8, rn))
		case 2:
			c.word, c.ok = Ldar(size, rt, rn)
			c.wantOK = anyOK
			c.want = fmt.Sprintf("ldar%s %s, [%s]", suffix, regName(rsize, rt), regName(8, rn))
		case 3:
			c.word, c.ok = Stlr(size, rt, rn)
			c.wantOK = anyOK
			c.want = fmt.Sprintf("stlr%s %s, [%s]", suffix, regName(rsize, rt), regName(8, rn))
		}
		c.desc = c.want
		return
	}},
	{"system", func(o opnd) (c encCase) {
		defer catch(&c)
		c.ok, c.wantOK = true, true
		rn := pick(gprs, o.r[0])
		switch o.sel[0] % 7 {
		case 0:
			c.word, c.want = Br(rn), "br "+rn.String()
		case 1:
			c.word, c.want = Blr(rn), "blr "+rn.String()
		case 2:
			c.word, c.want = Ret(), "ret"
		case 3:
			c.word, c.want = Nop(), "nop"
		case 4:
			c.word, c.want = Brk(uint16(o.imm)), "brk "+hex(uint64(uint16(o.imm)))
		case 5:
			bs := []Barrier{BarrierISHLD, BarrierISHST, BarrierISH, BarrierSY}
			b := bs[o.sel[1]%4]
			c.word, c.want = Dmb(b), "dmb "+map[Barrier]string{BarrierISHLD: "ishld", BarrierISHST: "ishst", BarrierISH: "ish", BarrierSY: "sy"}[b]
		case 6:
			c.word, c.want = Nop(), "nop"
		}
		c.desc = c.want
		return
	}},
}

// lseForms are the encoders arm64asm cannot decode; llvm-mc checks them.
var lseForms = []form{
	{"Atomic", func(o opnd) (c encCase) {
		defer catch(&c)
		c.llvm = true
		ops := []AtomicOp{LDADD, LDCLR, LDEOR, LDSET, SWP}
		names := []string{"add", "clr", "eor", "set", "swp"}
		i := int(o.sel[0]) % 5
		ord := Order(o.sel[1] % 4)
		size := 4 << (o.size % 2)
		if o.sel[2]%16 == 0 {
			size = int(o.size % 10)
		}
		rs, rt, rn := pick(gprsZR, o.r[0]), pick(gprsZR, o.r[1]), pick(gprsSP, o.r[2])
		c.word, c.ok = Atomic(ops[i], ord, size, rs, rt, rn)
		c.wantOK = size == 4 || size == 8
		ordName := [...]string{"", "l", "a", "al"}[ord]
		switch {
		case ops[i] == SWP:
			c.want = fmt.Sprintf("swp%s %s, %s, [%s]", ordName, regName(size, rs), regName(size, rt), regName(8, rn))
		case rt == XZR && ord&Acquire == 0:
			c.want = fmt.Sprintf("st%s%s %s, [%s]", names[i], ordName, regName(size, rs), regName(8, rn))
		default:
			c.want = fmt.Sprintf("ld%s%s %s, %s, [%s]", names[i], ordName, regName(size, rs), regName(size, rt), regName(8, rn))
		}
		c.desc = c.want
		return
	}},
	{"Cas", func(o opnd) (c encCase) {
		defer catch(&c)
		c.llvm = true
		ord := Order(o.sel[1] % 4)
		size := 4 << (o.size % 2)
		if o.sel[2]%16 == 0 {
			size = int(o.size % 10)
		}
		rs, rt, rn := pick(gprsZR, o.r[0]), pick(gprsZR, o.r[1]), pick(gprsSP, o.r[2])
		c.word, c.ok = Cas(ord, size, rs, rt, rn)
		c.wantOK = size == 4 || size == 8
		c.want = fmt.Sprintf("cas%s %s, %s, [%s]", [...]string{"", "l", "a", "al"}[ord], regName(size, rs), regName(size, rt), regName(8, rn))
		c.desc = c.want
		return
	}},
}

// normalize collapses the whitespace of a disassembler's line.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
