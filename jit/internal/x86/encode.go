package x86

// op describes the fixed part of an instruction: legacy prefixes, REX.W,
// and the opcode bytes.
type op struct {
	size   uint8 // operand size in bytes: 2 adds 0x66, 8 sets REX.W
	prefix byte  // a legacy prefix before 0x66/REX (LOCK, F2, F3), or 0
	opc    [3]byte
	n      uint8 // opcode length
	// byteReg and byteRM mark byte-register operands in the reg and r/m
	// fields, which need a REX prefix for SPL, BPL, SIL and DIL.
	byteReg, byteRM bool
}

// The op struct fits a register: it is passed by value on the hot path.
func opc1(size int, b byte) op      { return op{size: uint8(size), opc: [3]byte{b}, n: 1} }
func opc2(size int, b1, b2 byte) op { return op{size: uint8(size), opc: [3]byte{b1, b2}, n: 2} }
func opc3(size int, b1, b2, b3 byte) op {
	return op{size: uint8(size), opc: [3]byte{b1, b2, b3}, n: 3}
}

// insn writes the bytes of one instruction straight into the spare
// capacity of the buffer: the encoder is on the compiler's hot path.
type insn struct {
	b *[16]byte
	n int
}

func (i *insn) put(v byte) { i.b[i.n&15] = v; i.n++ }

// start returns an insn writing at the end of a's buffer.
func (a *Asm) start() insn {
	if cap(a.b)-len(a.b) < 16 {
		a.b = append(a.b, make([]byte, 16+len(a.b))...)[:len(a.b)]
	}
	return insn{b: (*[16]byte)(a.b[len(a.b) : len(a.b)+16])}
}

func (a *Asm) flush(i *insn) { a.b = a.b[:len(a.b)+i.n] }

func (i *insn) put32(v int32) {
	i.put(byte(v))
	i.put(byte(v >> 8))
	i.put(byte(v >> 16))
	i.put(byte(v >> 24))
}

// header puts the legacy prefixes, the REX prefix (when needed) and the
// opcode. r, x, b are the extension bits of the reg, index and base/rm
// fields.
func (i *insn) header(o *op, r, x, b byte, forceREX bool) {
	p, n := i.b, i.n
	if o.prefix != 0 {
		p[n&15] = o.prefix
		n++
	}
	rex := 0x40 | r<<2 | x<<1 | b
	switch o.size {
	case 2:
		p[n&15] = 0x66
		n++
	case 8:
		rex |= 8
	}
	if rex != 0x40 || forceREX {
		p[n&15] = rex
		n++
	}
	p[n&15] = o.opc[0]
	p[(n+1)&15] = o.opc[1]
	p[(n+2)&15] = o.opc[2]
	i.n = n + int(o.n)
}

// prefixes emits the header of an instruction without ModRM (opcodes
// with the register in the low bits, like push and bswap).
func (a *Asm) prefixes(o op, r, x, b byte, forceREX bool) {
	i := a.start()
	i.header(&o, r, x, b, forceREX)
	a.flush(&i)
}

// rr emits an instruction with a register r/m operand. reg is a register
// or a /digit opcode extension.
func (a *Asm) rr(o op, reg byte, rm Reg) {
	force := (o.byteReg && Reg(reg).needsREXAsByte()) || (o.byteRM && rm.needsREXAsByte())
	i := a.start()
	i.header(&o, reg>>3&1, 0, rm.hi(), force)
	i.put(0xc0 | (reg&7)<<3 | rm.low())
	a.flush(&i)
}

// rm emits an instruction with a memory r/m operand.
func (a *Asm) rm(o op, reg byte, m Mem) {
	force := o.byteReg && Reg(reg).needsREXAsByte()
	i := a.start()
	if m.RIP {
		i.header(&o, reg>>3&1, 0, 0, force)
		i.put((reg&7)<<3 | 5)
		i.put32(m.Disp)
		a.flush(&i)
		return
	}
	var x byte
	if m.Scale != 0 {
		x = m.Index.hi()
	}
	i.header(&o, reg>>3&1, x, m.Base.hi(), force)
	i.modrmMem(reg, m)
	a.flush(&i)
}

// modrmMem puts ModRM, SIB and displacement of a memory operand.
func (i *insn) modrmMem(reg byte, m Mem) {
	var mod byte
	switch {
	case m.Disp == 0 && m.Base.low() != 5: // [rbp] and [r13] need a displacement
		mod = 0
	case fitsInt8(int64(m.Disp)):
		mod = 1
	default:
		mod = 2
	}
	reg = (reg & 7) << 3
	switch {
	case m.Scale != 0:
		i.put(mod<<6 | reg | 4)
		i.put(scaleBits(m.Scale)<<6 | m.Index.low()<<3 | m.Base.low())
	case m.Base.low() == 4: // rsp and r12 need a SIB byte
		i.put(mod<<6 | reg | 4)
		i.put(0x24)
	default:
		i.put(mod<<6 | reg | m.Base.low())
	}
	switch mod {
	case 1:
		i.put(byte(m.Disp))
	case 2:
		i.put32(m.Disp)
	}
}

func scaleBits(s uint8) byte {
	switch s {
	case 2:
		return 1
	case 4:
		return 2
	case 8:
		return 3
	}
	return 0
}
