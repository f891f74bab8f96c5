package arm64

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// must is for table rows whose operands are encodable.
func must(w uint32, ok bool) uint32 {
	if !ok {
		return 0xffffffff // decodes as nothing, so the row fails
	}
	return w
}

// TestEncodingsTable checks hand-picked encodings, mostly where register
// 31 means SP or XZR and where the disassembler prints an alias.
func TestEncodingsTable(t *testing.T) {
	for _, c := range []struct {
		want string
		word uint32
	}{
		// Register-register add/sub with SP switches to the extended form.
		{"add x0, sp, x1", ALUReg(ADD, 8, X0, SP, X1)},
		{"add sp, x3, x2", ALUReg(ADD, 8, SP, X3, X2)},
		{"sub wsp, w3, w2", ALUReg(SUB, 4, SP, X3, X2)},
		{"adds x0, sp, x1", ALUReg(ADDS, 8, X0, SP, X1)},
		{"cmp sp, x2", Cmp(8, SP, X2)},
		{"cmp w1, w2", Cmp(4, X1, X2)},
		{"cmn x1, x2", Cmn(8, X1, X2)},
		{"tst x1, x2", Tst(8, X1, X2)},
		{"add x0, x1, xzr", ALUReg(ADD, 8, X0, X1, XZR)},
		{"neg x1, x2", Neg(8, X1, X2)},
		{"neg w1, w2", Neg(4, X1, X2)},
		{"mvn x1, x2", Mvn(8, X1, X2)},
		{"mov x1, x2", Mov(8, X1, X2)},
		{"mov w1, w2", Mov(4, X1, X2)},
		{"mov x1, xzr", Mov(8, X1, XZR)},
		{"mov sp, x2", Mov(8, SP, X2)},
		{"mov x29, sp", Mov(8, X29, SP)},
		{"mov w1, wsp", Mov(4, X1, SP)},
		// Immediates: SP in add/sub, XZR where flags are set.
		{"add x0, sp, #0x10", must(ALUImm(ADD, 8, X0, SP, 16))},
		{"sub sp, sp, #0x20", must(AddImm(8, SP, SP, -32))},
		{"add sp, x1, #0x5, lsl #12", must(ALUImm(ADD, 8, SP, X1, 0x5000))},
		{"cmp sp, #0x10", must(CmpImm(8, SP, 16))},
		{"cmn w1, #0x1", must(CmpImm(4, X1, -1))},
		{"cmp x1, #0xfff, lsl #12", must(CmpImm(8, X1, 0xfff000))},
		{"tst w3, #0x1", must(TstImm(4, X3, 1))},
		{"tst x3, #0xffffffff00000000", must(TstImm(8, X3, 0xffffffff00000000))},
		{"orr sp, x1, #0xff", must(ALUImm(ORR, 8, SP, X1, 0xff))},
		{"and wsp, w1, #0xfffffffe", must(ALUImm(AND, 4, SP, X1, 0xfffffffe))},
		{"eor x1, x2, #0x5555555555555555", must(ALUImm(EOR, 8, X1, X2, 0x5555555555555555))},
		{"and x1, x2, #0x7fffffffffffffff", must(ALUImm(AND, 8, X1, X2, 1<<63-1))},
		{"mov w0, #0xf0f0f0f0", must(ALUImm(ORR, 4, X0, XZR, 0xf0f0f0f0))},
		// Multiply, divide, shifts, extends, byte swaps.
		{"mul x1, x2, x3", Mul(8, X1, X2, X3)},
		{"mneg w1, w2, w3", Msub(4, X1, X2, X3, XZR)},
		{"msub x0, x1, x2, x3", Msub(8, X0, X1, X2, X3)},
		{"sdiv w0, w1, w2", Sdiv(4, X0, X1, X2)},
		{"lsl x1, x2, x3", ShiftReg(LSL, 8, X1, X2, X3)},
		{"asr w1, w2, w3", ShiftReg(ASR, 4, X1, X2, X3)},
		{"lsl x1, x2, #63", must(ShiftImm(LSL, 8, X1, X2, 63))},
		{"lsl w1, w2, #1", must(ShiftImm(LSL, 4, X1, X2, 1))},
		{"asr x1, x2, #63", must(ShiftImm(ASR, 8, X1, X2, 63))},
		{"lsr w1, w2, #31", must(ShiftImm(LSR, 4, X1, X2, 31))},
		{"sxtb x1, w2", Sxtb(8, X1, X2)},
		{"sxth w1, w2", Sxth(4, X1, X2)},
		{"sxtw x1, w2", Sxtw(X1, X2)},
		{"uxtb w1, w2", Uxtb(X1, X2)},
		{"uxth w1, w2", Uxth(X1, X2)},
		{"ubfx x1, x2, #8, #8", must(Ubfx(8, X1, X2, 8, 8))},
		{"bfxil x1, x2, #0, #16", must(Bfm(8, X1, X2, 0, 15))},
		{"rev16 w1, w2", Rev16(4, X1, X2)},
		{"rev16 x1, x2", Rev16(8, X1, X2)},
		{"rev32 x1, x2", Rev32(X1, X2)},
		{"rev w1, w2", Rev(4, X1, X2)},
		{"rev x1, x2", Rev(8, X1, X2)},
		{"umulh x1, x2, x3", Umulh(X1, X2, X3)},
		// Moves.
		{"mov x1, #0x12340000", must(Movz(8, X1, 0x1234, 16))},
		{"movz x1, #0x0, lsl #16", must(Movz(8, X1, 0, 16))},
		{"mov x1, #0xffffffffffffedcb", must(Movn(8, X1, 0x1234, 0))},
		{"mov w1, #0xffffedcb", must(Movn(4, X1, 0x1234, 0))},
		{"movn w1, #0xffff", must(Movn(4, X1, 0xffff, 0))},
		{"movk x1, #0x1234, lsl #48", must(Movk(8, X1, 0x1234, 48))},
		{"movk w1, #0x1234, lsl #16", must(Movk(4, X1, 0x1234, 16))},
		// Loads and stores: the base may be SP, the data register XZR.
		{"ldr x1, [sp,#8]", must(LdrImm(8, X1, SP, 8))},
		{"ldr x1, [x2,#32760]", must(Load(8, X1, X2, 32760))},
		{"ldur x1, [x2,#-8]", must(Load(8, X1, X2, -8))},
		{"ldur x1, [x2,#1]", must(Load(8, X1, X2, 1))},
		{"ldrb w1, [x2,#4095]", must(Load(1, X1, X2, 4095))},
		{"ldrh w1, [x2]", must(Load(2, X1, X2, 0))},
		{"str xzr, [sp,#8]", must(Store(8, XZR, SP, 8))},
		{"sturh wzr, [x2,#-2]", must(Stur(2, XZR, X2, -2))},
		{"strb w1, [x2,x3]", must(StrReg(1, X1, X2, X3))},
		{"ldr w1, [sp,x3]", must(LdrReg(4, X1, SP, X3))},
		{"ldrsb x1, [x2,#1]", must(LoadSX(1, X1, X2, 1))},
		{"ldursh x1, [x2,#-2]", must(LoadSX(2, X1, X2, -2))},
		{"ldrsw x1, [x2,x3]", must(LdrsReg(4, X1, X2, X3))},
		{"stp x29, x30, [sp,#-16]!", must(Stp(8, X29, X30, SP, -16, PreIndex))},
		{"ldp x29, x30, [sp],#16", must(Ldp(8, X29, X30, SP, 16, PostIndex))},
		{"stp x19, x20, [sp,#16]", must(Stp(8, X19, X20, SP, 16, Offset))},
		{"ldp w1, w2, [x3,#-256]", must(Ldp(4, X1, X2, X3, -256, Offset))},
		{"stp xzr, xzr, [sp,#504]", must(Stp(8, XZR, XZR, SP, 504, Offset))},
		// Branches, at the edges of their ranges.
		{"b .+0x7fffffc", must(B(RangeB - 4))},
		{"b .+0xfffffffff8000000", must(B(-RangeB))},
		{"bl .+0x0", must(BL(0))},
		{"b.ne .+0xffffc", must(BCond(NE, RangeCond-4))},
		{"b.cs .+0xfffffffffff00000", must(BCond(HS, -RangeCond))},
		{"b.cc .+0x8", must(BCond(LO, 8))},
		{"cbz w1, .+0x10", must(Cbz(4, X1, 16))},
		{"cbnz xzr, .+0xfffffffffffffffc", must(Cbnz(8, XZR, -4))},
		{"tbz w1, #31, .+0x7ffc", must(Tbz(X1, 31, RangeTB-4))},
		{"tbnz x1, #63, .+0xffffffffffff8000", must(Tbnz(X1, 63, -RangeTB))},
		{"br x17", Br(X17)},
		{"blr x16", Blr(X16)},
		{"ret", Ret()},
		{"adr x1, .+0xfffff", must(Adr(X1, RangeCond-1))},
		{"adrp x1, .+0xfffffffffffff000", must(Adrp(X1, -4096))},
		// Conditional select.
		{"csel x1, x2, x3, lt", Csel(8, X1, X2, X3, LT)},
		{"cset w1, eq", must(Cset(4, X1, EQ))},
		{"cset x1, hi", must(Cset(8, X1, HI))},
		{"cinc x1, x2, ne", Csinc(8, X1, X2, X2, EQ)},
		{"csetm x1, ge", Csinv(8, X1, XZR, XZR, LT)},
		{"cneg w1, w2, le", Csneg(4, X1, X2, X2, GT)},
		// Exclusive and ordered accesses, barriers.
		{"ldaxr x1, [x2]", must(Ldxr(true, 8, X1, X2))},
		{"ldxr w1, [sp]", must(Ldxr(false, 4, X1, SP))},
		{"stlxr w3, x1, [x2]", must(Stxr(true, 8, X3, X1, X2))},
		{"stxr w3, w1, [sp]", must(Stxr(false, 4, X3, X1, SP))},
		{"ldar x1, [x2]", must(Ldar(8, X1, X2))},
		{"ldarh w1, [x2]", must(Ldar(2, X1, X2))},
		{"stlrb w1, [x2]", must(Stlr(1, X1, X2))},
		{"dmb ish", Dmb(BarrierISH)},
		{"dmb ishld", Dmb(BarrierISHLD)},
		{"brk #0x3e8", Brk(1000)},
		{"nop", Nop()},
	} {
		got, err := disasm(c.word)
		if err != nil || got != c.want {
			t.Errorf("%#08x decodes as %q (%v), want %q", c.word, got, err, c.want)
		}
	}
}

// TestRegister31Misuse checks that naming SP where the encoding means XZR
// (or the reverse) panics instead of encoding the other register.
func TestRegister31Misuse(t *testing.T) {
	for _, c := range []struct {
		name string
		emit func()
	}{
		{"logical rd=sp", func() { ALUReg(AND, 8, SP, X1, X2) }},
		{"logical rn=sp", func() { ALUReg(ORR, 8, X0, SP, X2) }},
		{"rm=sp", func() { ALUReg(ADD, 8, X0, X1, SP) }},
		{"subs rd=sp", func() { ALUReg(SUBS, 8, SP, X1, X2) }},
		{"shifted rn=sp", func() { ALUShifted(ADD, 8, X0, SP, X2, LSL, 1) }},
		{"add imm rd=xzr", func() { ALUImm(ADD, 8, XZR, X1, 1) }},
		{"add imm rn=xzr", func() { ALUImm(ADD, 8, X0, XZR, 1) }},
		{"adds imm rd=sp", func() { ALUImm(ADDS, 8, SP, X1, 1) }},
		{"ands imm rd=sp", func() { ALUImm(ANDS, 8, SP, X1, 1) }},
		{"and imm rn=sp", func() { ALUImm(AND, 8, X0, SP, 1) }},
		{"mul sp", func() { Mul(8, SP, X1, X2) }},
		{"movz sp", func() { Movz(8, SP, 1, 0) }},
		{"MovConst sp", func() { MovConstWords(8, SP, 1) }},
		{"ldr rt=sp", func() { LdrImm(8, SP, X1, 0) }},
		{"ldr rn=xzr", func() { LdrImm(8, X1, XZR, 0) }},
		{"ldr rm=sp", func() { LdrReg(8, X1, X2, SP) }},
		{"stp rt=sp", func() { Stp(8, SP, X1, X2, 0, Offset) }},
		{"cbz sp", func() { Cbz(8, SP, 0) }},
		{"br sp", func() { Br(SP) }},
		{"ldadd rn=xzr", func() { Atomic(LDADD, Relaxed, 8, X1, X2, XZR) }},
		{"cas rs=sp", func() { Cas(Relaxed, 8, SP, X2, X3) }},
		{"bad size", func() { ALUReg(ADD, 2, X0, X1, X2) }},
		{"bad op", func() { ALUReg(BICS+1, 8, X0, X1, X2) }},
		{"bad register", func() { Mov(8, X0, Reg(40)) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.emit()
		}()
	}
}

// TestLogicalImmediates checks encodeBitmask against the definition: every
// logical immediate encodes and decodes back, nothing else encodes, and
// every field combination that decodes encodes to the same value.
func TestLogicalImmediates(t *testing.T) {
	for _, size := range []int{4, 8} {
		for v := range logicalImms[size] {
			n, immr, imms, ok := encodeBitmask(size, v)
			got, ok2 := decodeBitmask(size, n, immr, imms)
			if !ok || !ok2 || got != v {
				t.Fatalf("size %d: %#x encodes as %d/%d/%d (%v), decodes as %#x (%v)", size, v, n, immr, imms, ok, got, ok2)
			}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 100000 {
			v := rng.Uint64() >> rng.UintN(64)
			if size == 4 && rng.UintN(2) == 0 {
				v &= 0xffffffff
			}
			if IsLogicalImm(size, v) != logicalImms[size][v] {
				t.Fatalf("size %d: IsLogicalImm(%#x) = %v", size, v, !logicalImms[size][v])
			}
		}
		count := 0
		for f := range uint32(1 << 13) {
			n, immr, imms := f>>12, f>>6&63, f&63
			v, ok := decodeBitmask(size, n, immr, imms)
			if !ok {
				continue
			}
			count++
			if !logicalImms[size][v] {
				t.Fatalf("size %d: fields %d/%d/%d decode to %#x, not a logical immediate", size, n, immr, imms, v)
			}
			w, ok := ALUImm(ORR, size, X1, X2, v)
			if got, err := disasm(w); !ok || err != nil || got != fmt.Sprintf("orr %s, %s, %s", regName(size, X1), regName(size, X2), hex(v)) {
				t.Fatalf("size %d: ORR with %#x: %q %v", size, v, got, err)
			}
		}
		// Each value has exactly one encoding when immr is reduced modulo
		// the element size; the field space holds them with repeats.
		if count < len(logicalImms[size]) {
			t.Errorf("size %d: %d decodable field values for %d immediates", size, count, len(logicalImms[size]))
		}
	}
	// e*(e-1) patterns per element size e: 1302 up to 32 bits, 5334 in all.
	if len(logicalImms[4]) != 1302 || len(logicalImms[8]) != 5334 {
		t.Errorf("%d and %d logical immediates, want 1302 and 5334", len(logicalImms[4]), len(logicalImms[8]))
	}
}

// evalMov runs a MovConst sequence as arm64asm reads it.
func evalMov(t *testing.T, size int, code []uint32) uint64 {
	var x uint64
	for _, w := range code {
		text, err := disasm(w)
		if err != nil {
			t.Fatalf("%#08x: %v", w, err)
		}
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' || r == '#' })
		imm, err := strconv.ParseUint(f[2], 0, 64)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		shift := uint64(0)
		if len(f) == 5 && f[3] == "lsl" {
			shift, _ = strconv.ParseUint(f[4], 10, 8)
		}
		switch f[0] {
		case "mov":
			x = imm
		case "movz":
			x = imm << shift
		case "movn":
			x = ^(imm << shift)
		case "movk":
			x = x&^(0xffff<<shift) | imm<<shift
		default:
			t.Fatalf("MovConst emitted %q", text)
		}
	}
	if size == 4 {
		x &= 0xffffffff
	}
	return x
}

// TestMovConst checks that MovConstWords sets the register to the value,
// in no more instructions than the plain MOVZ/MOVN+MOVK sequences.
func TestMovConst(t *testing.T) {
	values := []uint64{0, 1, 0xffff, 0x10000, 0xffffffff, 1 << 32, ^uint64(0), ^uint64(1), 0x8000000000000000,
		0x123456789abcdef0, 0xffffffff00000000, 0x00ff00ff00ff00ff, 0x5555555555555555, 0x5555555555551234,
		0x1234ffffffffffff, 0xffff1234ffff5678, 0x0000ffff0000ffff, 0x12340000ffff0000, 0x7fffffff, 0x80000000, 0xfffffffe}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		v := rng.Uint64()
		for i := range 4 { // make halfwords 0 or 0xffff often
			switch rng.UintN(3) {
			case 0:
				v &^= 0xffff << (16 * i)
			case 1:
				v |= 0xffff << (16 * i)
			}
		}
		values = append(values, v, logicalImmList[rng.IntN(len(logicalImmList))]^uint64(rng.UintN(0x10000))<<(16*rng.UintN(4)))
	}
	total := 0
	for _, size := range []int{4, 8} {
		halves := size / 2
		for _, v := range values {
			code, n := MovConstWords(size, X3, v)
			want := v
			if size == 4 {
				want &= 0xffffffff
			}
			if got := evalMov(t, size, code[:n]); got != want {
				t.Fatalf("size %d: MovConst(%#x) = %#x", size, v, got)
			}
			zeros, ones := 0, 0
			for i := range halves {
				switch uint16(want >> (16 * i)) {
				case 0:
					zeros++
				case 0xffff:
					ones++
				}
			}
			if plain := max(1, halves-max(zeros, ones)); n > plain {
				t.Errorf("size %d: MovConst(%#x) takes %d instructions, MOVZ/MOVN %d", size, v, n, plain)
			}
			if IsLogicalImm(size, want) && n != 1 {
				t.Errorf("size %d: MovConst(%#x) takes %d instructions for a logical immediate", size, v, n)
			}
			total += n
		}
	}
	t.Logf("%d constants, %.2f instructions each", 2*len(values), float64(total)/float64(2*len(values)))
}

// TestPatchBranch emits branches with a zero offset and patches them, as
// a back end does for forward jumps.
func TestPatchBranch(t *testing.T) {
	var a Asm
	sites := []struct {
		word uint32
		want string
	}{
		{must(B(0)), "b"}, {must(BL(0)), "bl"}, {must(BCond(GT, 0)), "b.gt"},
		{must(Cbz(4, X1, 0)), "cbz w1,"}, {must(Cbnz(8, X2, 0)), "cbnz x2,"},
		{must(Tbz(X3, 5, 0)), "tbz w3, #5,"}, {must(Tbnz(X4, 40, 0)), "tbnz x4, #40,"},
	}
	for _, s := range sites {
		a.Emit(s.word)
	}
	for range 100 {
		a.Emit(Nop())
	}
	target := a.Len()
	for i, s := range sites {
		pos := 4 * i
		if err := a.PatchBranch(pos, target); err != nil {
			t.Fatal(err)
		}
		got, _ := disasm(a.Word(pos))
		if want := fmt.Sprintf("%s %s", s.want, pcrel(int64(target-pos))); got != want {
			t.Errorf("patched: %q, want %q", got, want)
		}
		// Backwards too.
		if err := a.PatchBranch(pos, 0); err != nil {
			t.Fatal(err)
		}
		got, _ = disasm(a.Word(pos))
		if want := fmt.Sprintf("%s %s", s.want, pcrel(int64(-pos))); got != want {
			t.Errorf("patched back: %q, want %q", got, want)
		}
	}
	// Out of range: TBZ reaches 32 KiB, B.cond 1 MiB, B 128 MiB.
	if _, err := Retarget(sites[5].word, RangeTB); err == nil {
		t.Error("TBZ retargeted 32 KiB away")
	}
	if _, err := Retarget(sites[2].word, -RangeCond-4); err == nil {
		t.Error("B.cond retargeted 1 MiB back")
	}
	if _, err := Retarget(sites[0].word, RangeB); err == nil {
		t.Error("B retargeted 128 MiB away")
	}
	if _, err := Retarget(sites[0].word, 2); err == nil {
		t.Error("B retargeted to a misaligned offset")
	}
	defer func() {
		if recover() == nil {
			t.Error("retargeting a NOP did not panic")
		}
	}()
	Retarget(Nop(), 0)
}

func TestReservedRegisters(t *testing.T) {
	for r := X0; r <= SP; r++ {
		want := r == X18 || r >= X26
		if Reserved(r) != want {
			t.Errorf("Reserved(%v) = %v", r, !want)
		}
	}
}
