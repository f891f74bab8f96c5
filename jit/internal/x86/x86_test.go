package x86

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

var regNames = map[int][16]string{
	8: {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"},
	4: {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"},
	2: {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"},
	1: {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"},
}

func rn(size int, r Reg) string { return regNames[size][r] }

var ptrNames = map[int]string{1: "byte ptr ", 2: "word ptr ", 4: "dword ptr ", 8: "qword ptr "}

// memText formats m the way x86asm.IntelSyntax does.
func memText(size int, m Mem) string {
	var s strings.Builder
	s.WriteString(ptrNames[size])
	s.WriteString("[")
	if m.RIP() {
		s.WriteString("rip")
	} else {
		s.WriteString(rn(8, m.Base()))
	}
	if m.Scale() != 0 {
		if m.Scale() == 1 {
			fmt.Fprintf(&s, "+%s", rn(8, m.Index()))
		} else {
			fmt.Fprintf(&s, "+%d*%s", m.Scale(), rn(8, m.Index()))
		}
	}
	switch {
	case m.Disp() > 0:
		fmt.Fprintf(&s, "+%#x", m.Disp())
	case m.Disp() < 0 && fitsInt8(int64(m.Disp())):
		fmt.Fprintf(&s, "-%#x", -int64(m.Disp()))
	case m.Disp() < 0: // x86asm prints a negative disp32 as unsigned
		fmt.Fprintf(&s, "+%#x", uint32(m.Disp()))
	}
	s.WriteString("]")
	return s.String()
}

func hexImm(v int64) string {
	if v < 0 {
		return fmt.Sprintf("-%#x", -v)
	}
	return fmt.Sprintf("%#x", v)
}

// encCase is one encoding to check: emit writes exactly one instruction
// whose Intel syntax (as x86asm prints it) is want.
type encCase struct {
	want string
	emit func(a *Asm)
}

var allRegs = []Reg{RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15}

// memOperands covers every base register with each displacement size and
// a few SIB forms.
func memOperands() []Mem {
	var ms []Mem
	for _, b := range allRegs {
		for _, d := range []int32{0, 8, -8, 0x7f, -0x80, 0x100, -0x1000, 0x7fffffff} {
			ms = append(ms, M(b, d))
		}
	}
	for _, idx := range []Reg{RAX, RCX, R9, R15} {
		for _, sc := range []uint8{1, 2, 4, 8} {
			ms = append(ms, MIndex(R12, idx, sc, 16), MIndex(RBP, idx, sc, 0))
		}
	}
	return ms
}

// sampleMems is a smaller set for forms with many other variations.
func sampleMems() []Mem {
	return []Mem{M(RAX, 0), M(RSP, 8), M(RBP, -8), M(R12, 0x58), M(R13, 0), M(RDI, 0x1000), M(R11, -0x200), MIndex(RBX, R10, 8, 4)}
}

func encCases() []encCase {
	var cs []encCase
	add := func(want string, emit func(a *Asm)) { cs = append(cs, encCase{want, emit}) }
	aluNames := map[ALUOp]string{ADD: "add", OR: "or", ADC: "adc", SBB: "sbb", AND: "and", SUB: "sub", XOR: "xor", CMP: "cmp"}
	for _, size := range []int{4, 8} {
		for o, name := range aluNames {
			for _, d := range allRegs {
				for _, s := range allRegs {
					add(fmt.Sprintf("%s %s, %s", name, rn(size, d), rn(size, s)), func(a *Asm) { a.ALURR(o, size, d, s) })
				}
				for _, imm := range []int32{1, -1, 127, -128, 128, -129, 0x12345678, -0x80000000} {
					add(fmt.Sprintf("%s %s, %s", name, rn(size, d), hexImm(int64(imm))), func(a *Asm) { a.ALURI(o, size, d, imm) })
				}
			}
			for _, m := range memOperands() {
				add(fmt.Sprintf("%s %s, %s", name, rn(size, RDX), memText(size, m)), func(a *Asm) { a.ALURM(o, size, RDX, m) })
				add(fmt.Sprintf("%s %s, %s", name, rn(size, R11), memText(size, m)), func(a *Asm) { a.ALURM(o, size, R11, m) })
				add(fmt.Sprintf("%s %s, %s", name, memText(size, m), rn(size, R9)), func(a *Asm) { a.ALUMR(o, size, m, R9) })
				add(fmt.Sprintf("%s %s, 0x5", name, memText(size, m)), func(a *Asm) { a.ALUMI(o, size, m, 5) })
				add(fmt.Sprintf("%s %s, 0x1000", name, memText(size, m)), func(a *Asm) { a.ALUMI(o, size, m, 0x1000) })
				if o != CMP {
					add(fmt.Sprintf("lock %s %s, %s", name, memText(size, m), rn(size, RSI)), func(a *Asm) { a.LockALUMR(o, size, m, RSI) })
				}
			}
		}
		for _, r1 := range allRegs {
			for _, r2 := range allRegs {
				add(fmt.Sprintf("test %s, %s", rn(size, r1), rn(size, r2)), func(a *Asm) { a.TestRR(size, r1, r2) })
				add(fmt.Sprintf("imul %s, %s", rn(size, r1), rn(size, r2)), func(a *Asm) { a.ImulRR(size, r1, r2) })
				add(fmt.Sprintf("imul %s, %s, 0x7", rn(size, r1), rn(size, r2)), func(a *Asm) { a.ImulRRI(size, r1, r2, 7) })
				add(fmt.Sprintf("imul %s, %s, 0x186a3", rn(size, r1), rn(size, r2)), func(a *Asm) { a.ImulRRI(size, r1, r2, 100003) })
				add(fmt.Sprintf("mov %s, %s", rn(size, r1), rn(size, r2)), func(a *Asm) { a.MovRR(size, r1, r2) })
				for c, name := range cmovNames {
					add(fmt.Sprintf("cmov%s %s, %s", name, rn(size, r1), rn(size, r2)), func(a *Asm) { a.Cmov(c, size, r1, r2) })
				}
				if size == 8 && r2 == RAX {
					for c, name := range cmovNames {
						add(fmt.Sprintf("set%s %s", name, rn(1, r1)), func(a *Asm) { a.Setcc(c, r1) })
					}
				}
				for _, k := range []struct {
					kind byte
					name string
				}{{SHLX, "shlx"}, {SHRX, "shrx"}, {SARX, "sarx"}} {
					for _, c := range []Reg{RCX, R11, RAX} {
						add(fmt.Sprintf("%s %s, %s, %s", k.name, rn(size, r1), rn(size, r2), rn(size, c)), func(a *Asm) { a.ShiftX(k.kind, size, r1, r2, c) })
					}
				}
				for _, lo := range []Reg{RCX, R11, RAX} {
					if lo != r1 {
						add(fmt.Sprintf("mulx %s, %s, %s", rn(size, r1), rn(size, lo), rn(size, r2)), func(a *Asm) { a.Mulx(size, r1, lo, r2) })
					}
				}
			}
			add(fmt.Sprintf("test %s, 0x7fffffff", rn(size, r1)), func(a *Asm) { a.TestRI(size, r1, 0x7fffffff) })
			for o, name := range map[UnaryOp]string{NOT: "not", NEG: "neg", MUL: "mul", IMUL: "imul", DIV: "div", IDIV: "idiv"} {
				add(fmt.Sprintf("%s %s", name, rn(size, r1)), func(a *Asm) { a.Unary(o, size, r1) })
			}
			for o, name := range map[ShiftOp]string{ROL: "rol", ROR: "ror", SHL: "shl", SHR: "shr", SAR: "sar"} {
				add(fmt.Sprintf("%s %s, 0x1", name, rn(size, r1)), func(a *Asm) { a.ShiftRI(o, size, r1, 1) })
				add(fmt.Sprintf("%s %s, 0x1f", name, rn(size, r1)), func(a *Asm) { a.ShiftRI(o, size, r1, 31) })
				add(fmt.Sprintf("%s %s, cl", name, rn(size, r1)), func(a *Asm) { a.ShiftRCL(o, size, r1) })
			}
			add(fmt.Sprintf("bswap %s", rn(size, r1)), func(a *Asm) { a.Bswap(size, r1) })
		}
	}
	add("cqo", func(a *Asm) { a.Cqo(8) })
	add("cdq", func(a *Asm) { a.Cqo(4) })
	for _, r := range allRegs {
		add(fmt.Sprintf("ror %s, 0x8", rn(2, r)), func(a *Asm) { a.ShiftRI(ROR, 2, r, 8) })
		add(fmt.Sprintf("test %s, 0x3", rn(1, r)), func(a *Asm) { a.TestRI(1, r, 3) })
		add(fmt.Sprintf("mov %s, 0x12345678", rn(4, r)), func(a *Asm) { a.MovRI32(r, 0x12345678) })
		add(fmt.Sprintf("mov %s, -0x2", rn(8, r)), func(a *Asm) { a.MovRISX(r, -2) })
		add(fmt.Sprintf("mov %s, 0x123456789abcdef0", rn(8, r)), func(a *Asm) { a.MovRI64(r, 0x123456789abcdef0) })
		add(fmt.Sprintf("xor %s, %s", rn(4, r), rn(4, r)), func(a *Asm) { a.MovRI(r, 0) })
		add(fmt.Sprintf("mov %s, -0x1", rn(4, r)), func(a *Asm) { a.MovRI(r, 0xffffffff) })
		add(fmt.Sprintf("mov %s, -0x80000000", rn(8, r)), func(a *Asm) { a.MovRI(r, 0xffffffff80000000) })
		add(fmt.Sprintf("mov %s, 0x100000000", rn(8, r)), func(a *Asm) { a.MovRI(r, 1<<32) })
		add(fmt.Sprintf("push %s", rn(8, r)), func(a *Asm) { a.Push(r) })
		add(fmt.Sprintf("pop %s", rn(8, r)), func(a *Asm) { a.Pop(r) })
		add(fmt.Sprintf("jmp %s", rn(8, r)), func(a *Asm) { a.JmpReg(r) })
		add(fmt.Sprintf("call %s", rn(8, r)), func(a *Asm) { a.CallReg(r) })
		for _, s := range allRegs {
			add(fmt.Sprintf("movzx %s, %s", rn(4, r), rn(1, s)), func(a *Asm) { a.MovzxRR(1, r, s) })
			add(fmt.Sprintf("movzx %s, %s", rn(4, r), rn(2, s)), func(a *Asm) { a.MovzxRR(2, r, s) })
			add(fmt.Sprintf("movsx %s, %s", rn(4, r), rn(1, s)), func(a *Asm) { a.MovsxRR(1, 4, r, s) })
			add(fmt.Sprintf("movsx %s, %s", rn(8, r), rn(1, s)), func(a *Asm) { a.MovsxRR(1, 8, r, s) })
			add(fmt.Sprintf("movsx %s, %s", rn(4, r), rn(2, s)), func(a *Asm) { a.MovsxRR(2, 4, r, s) })
			add(fmt.Sprintf("movsx %s, %s", rn(8, r), rn(2, s)), func(a *Asm) { a.MovsxRR(2, 8, r, s) })
			add(fmt.Sprintf("movsxd %s, %s", rn(8, r), rn(4, s)), func(a *Asm) { a.MovsxRR(4, 8, r, s) })
		}
	}
	xregs := []XReg{0, 1, 2, 7, 8, 11, 15}
	for _, d := range xregs {
		for _, s := range xregs {
			add(fmt.Sprintf("pcmpeqb xmm%d, xmm%d", d, s), func(a *Asm) { a.Pcmpeqb(d, s) })
			add(fmt.Sprintf("por xmm%d, xmm%d", d, s), func(a *Asm) { a.Por(d, s) })
			add(fmt.Sprintf("pcmpeqw xmm%d, xmm%d", d, s), func(a *Asm) { a.Pcmpeqw(d, s) })
			add(fmt.Sprintf("pcmpeqd xmm%d, xmm%d", d, s), func(a *Asm) { a.Pcmpeqd(d, s) })
			add(fmt.Sprintf("pandn xmm%d, xmm%d", d, s), func(a *Asm) { a.Pandn(d, s) })
			add(fmt.Sprintf("pxor xmm%d, xmm%d", d, s), func(a *Asm) { a.Pxor(d, s) })
			add(fmt.Sprintf("pminub xmm%d, xmm%d", d, s), func(a *Asm) { a.Pminub(d, s) })
			add(fmt.Sprintf("movdqa xmm%d, xmm%d", d, s), func(a *Asm) { a.Movdqa(d, s) })
			add(fmt.Sprintf("pshufd xmm%d, xmm%d, 0x0", d, s), func(a *Asm) { a.Pshufd(d, s, 0) })
		}
		for _, r := range allRegs {
			add(fmt.Sprintf("pmovmskb %s, xmm%d", rn(4, r), d), func(a *Asm) { a.Pmovmskb(r, d) })
			add(fmt.Sprintf("movd xmm%d, %s", d, rn(4, r)), func(a *Asm) { a.MovdToX(d, r) })
		}
		for _, m := range sampleMems() {
			add(fmt.Sprintf("movdqu xmm%d, %s", d, strings.Replace(memText(8, m), "qword", "xmmword", 1)), func(a *Asm) { a.Movdqu(d, m) })
		}
	}
	for _, size := range []int{4, 8} {
		for _, d := range allRegs {
			for _, s := range allRegs {
				add(fmt.Sprintf("bsf %s, %s", rn(size, d), rn(size, s)), func(a *Asm) { a.Bsf(size, d, s) })
			}
		}
	}
	for _, m := range memOperands() {
		for _, r := range []Reg{RAX, RSI, RDI, RBP, R8, R11, R15} {
			add(fmt.Sprintf("movzx %s, %s", rn(4, r), memText(1, m)), func(a *Asm) { a.Load(1, r, m) })
			add(fmt.Sprintf("movzx %s, %s", rn(4, r), memText(2, m)), func(a *Asm) { a.Load(2, r, m) })
			add(fmt.Sprintf("mov %s, %s", rn(4, r), memText(4, m)), func(a *Asm) { a.Load(4, r, m) })
			add(fmt.Sprintf("mov %s, %s", rn(8, r), memText(8, m)), func(a *Asm) { a.Load(8, r, m) })
			add(fmt.Sprintf("movsx %s, %s", rn(8, r), memText(1, m)), func(a *Asm) { a.LoadSX(1, r, m) })
			add(fmt.Sprintf("movsx %s, %s", rn(8, r), memText(2, m)), func(a *Asm) { a.LoadSX(2, r, m) })
			add(fmt.Sprintf("movsxd %s, %s", rn(8, r), memText(4, m)), func(a *Asm) { a.LoadSX(4, r, m) })
			for _, size := range []int{1, 2, 4, 8} {
				add(fmt.Sprintf("mov %s, %s", memText(size, m), rn(size, r)), func(a *Asm) { a.Store(size, m, r) })
			}
			add(fmt.Sprintf("lea %s, %s", rn(8, r), strings.TrimPrefix(memText(8, m), "qword ")), func(a *Asm) { a.Lea(r, m) })
			for _, size := range []int{2, 4, 8} {
				add(fmt.Sprintf("movbe %s, %s", rn(size, r), memText(size, m)), func(a *Asm) { a.MovbeLoad(size, r, m) })
				add(fmt.Sprintf("movbe %s, %s", memText(size, m), rn(size, r)), func(a *Asm) { a.MovbeStore(size, m, r) })
			}
			for _, size := range []int{4, 8} {
				add(fmt.Sprintf("lock xadd %s, %s", memText(size, m), rn(size, r)), func(a *Asm) { a.LockXadd(size, m, r) })
				add(fmt.Sprintf("xchg %s, %s", memText(size, m), rn(size, r)), func(a *Asm) { a.Xchg(size, m, r) })
				add(fmt.Sprintf("lock cmpxchg %s, %s", memText(size, m), rn(size, r)), func(a *Asm) { a.LockCmpxchg(size, m, r) })
			}
			add(fmt.Sprintf("cmp %s, %s", memText(1, m), rn(1, r)), func(a *Asm) { a.CmpMemByteReg(m, r) })
		}
		add(fmt.Sprintf("mov %s, 0x7f", memText(1, m)), func(a *Asm) { a.StoreImm(1, m, 0x7f) })
		add(fmt.Sprintf("mov %s, 0x1234", memText(2, m)), func(a *Asm) { a.StoreImm(2, m, 0x1234) })
		add(fmt.Sprintf("mov %s, 0x12345678", memText(4, m)), func(a *Asm) { a.StoreImm(4, m, 0x12345678) })
		add(fmt.Sprintf("mov %s, -0x3", memText(8, m)), func(a *Asm) { a.StoreImm(8, m, -3) })
		add(fmt.Sprintf("jmp %s", memText(8, m)), func(a *Asm) { a.JmpMem(m) })
	}
	add("lea r11, ptr [rip]", func(a *Asm) { a.LeaRIP(R11) })
	add("ret", func(a *Asm) { a.Ret() })
	add("ud2", func(a *Asm) { a.Ud2() })
	add("rep movsb byte ptr [rdi], byte ptr [rsi]", func(a *Asm) { a.RepMovsb() })
	add("int3", func(a *Asm) { a.Int3() })
	condNames := []string{"jo", "jno", "jb", "jnb", "jz", "jnz", "jbe", "jnbe", "js", "jns", "jp", "jnp", "jl", "jnl", "jle", "jnle"}
	for c, name := range condNames {
		add(fmt.Sprintf("%s .+0x0", name), func(a *Asm) { a.Jcc(Cond(c)) })
		add(fmt.Sprintf("%s .-0x10", name), func(a *Asm) { a.JccShort(Cond(c), -0x10) })
	}
	add("jmp .+0x0", func(a *Asm) { a.Jmp() })
	add("jmp .+0x7f", func(a *Asm) { a.JmpShort(0x7f) })
	add("call .+0x0", func(a *Asm) { a.Call() })
	return cs
}

// TestEncodingsDecode checks every encoder form against x86asm: the bytes
// decode to exactly one instruction, with the intended operands.
func TestEncodingsDecode(t *testing.T) {
	cases := encCases()
	failures := 0
	for _, c := range cases {
		var a Asm
		c.emit(&a)
		code := a.Bytes()
		inst, err := x86asm.Decode(code, 64)
		got := ""
		if err == nil {
			got = x86asm.IntelSyntax(inst, 0, nil)
		}
		if err != nil || inst.Len != len(code) || got != c.want {
			t.Errorf("% x: decodes as %q (len %d of %d, err %v), want %q", code, got, inst.Len, len(code), err, c.want)
			if failures++; failures > 40 {
				t.Fatal("too many failures")
			}
		}
	}
	t.Logf("%d encodings checked", len(cases))
}

// TestEncodingsLLVM runs the same encodings through llvm-mc's disassembler
// and checks that each one is a single instruction with the same mnemonic.
func TestEncodingsLLVM(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc-19")
	if err != nil {
		if mc, err = exec.LookPath("llvm-mc"); err != nil {
			t.Skip("llvm-mc not installed")
		}
	}
	if testing.Short() {
		t.Skip("slow: runs llvm-mc")
	}
	cases := encCases()
	var in bytes.Buffer
	for _, c := range cases {
		var a Asm
		c.emit(&a)
		for _, b := range a.Bytes() {
			fmt.Fprintf(&in, "0x%02x ", b)
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command(mc, "--disassemble", "-triple=x86_64", "-output-asm-variant=1")
	cmd.Stdin = &in
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, out)
	}
	var mnemonics []string
	pendingLock := false // llvm-mc prints a LOCK prefix on a line of its own
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ".") {
			continue
		}
		f := strings.Fields(line)
		m := f[0]
		if m == "lock" && len(f) == 1 {
			pendingLock = true
			continue
		}
		if pendingLock {
			m, pendingLock = "lock "+m, false
		}
		mnemonics = append(mnemonics, m)
	}
	if len(mnemonics) != len(cases) {
		t.Fatalf("llvm-mc decoded %d instructions from %d encodings", len(mnemonics), len(cases))
	}
	for i, c := range cases {
		want := strings.Fields(c.want)[0]
		if want == "lock" {
			want += " " + strings.Fields(c.want)[1]
		}
		if !sameMnemonic(want, mnemonics[i]) {
			t.Errorf("encoding %d: llvm-mc says %q, want %q (%s)", i, mnemonics[i], want, c.want)
		}
	}
}

// sameMnemonic accepts the spelling differences between x86asm and LLVM.
func sameMnemonic(x86asmName, llvmName string) bool {
	alias := map[string]string{
		"jz": "je", "jnz": "jne", "jnb": "jae", "jnbe": "ja", "jnl": "jge", "jnle": "jg",
		"cmovz": "cmove", "cmovnz": "cmovne", "cmovnb": "cmovae", "cmovnbe": "cmova", "cmovnl": "cmovge", "cmovnle": "cmovg",
	}
	if a, ok := alias[x86asmName]; ok {
		x86asmName = a
	} else if c, ok := strings.CutPrefix(x86asmName, "set"); ok {
		if a, ok := alias["cmov"+c]; ok {
			x86asmName = "set" + strings.TrimPrefix(a, "cmov")
		}
	}
	if llvmName == "movabs" {
		llvmName = "mov"
	}
	return x86asmName == llvmName
}

// Repeat copies what was emitted, also when the copy overlaps its source.
func TestRepeat(t *testing.T) {
	for _, n := range []int{1, 3, 6, 16, 17, 40} {
		var a Asm
		for i := range n + 2 {
			a.byte1(byte(i + 1))
		}
		before := string(a.Bytes())
		a.Repeat(1, n)
		if got, want := string(a.Bytes()), before+before[1:1+n]; got != want {
			t.Errorf("Repeat(1, %d): % x, want % x", n, got, want)
		}
	}
}

// TestAlign checks that padding to 16 bytes from every length decodes as
// NOPs only, each at most 8 bytes, ending on the boundary.
func TestAlign(t *testing.T) {
	for start := range 16 {
		a := NewAsm(32)
		for range start {
			a.byte1(0xcc)
		}
		a.Align(16)
		code := a.Bytes()
		if len(code)%16 != 0 || len(code) != 16*min(start, 1) {
			t.Fatalf("from %d bytes: padded to %d", start, len(code))
		}
		for pos := start; pos < len(code); {
			inst, err := x86asm.Decode(code[pos:], 64)
			if err != nil || inst.Op != x86asm.NOP || inst.Len > 8 {
				t.Fatalf("from %d bytes: % x at %d decodes as %v (%v)", start, code[pos:], pos, inst, err)
			}
			pos += inst.Len
		}
	}
}

// cmovNames are the conditions' names in the decoder's cmov mnemonics.
var cmovNames = map[Cond]string{
	CondO: "o", CondNO: "no", CondB: "b", CondAE: "nb", CondE: "z", CondNE: "nz", CondBE: "be", CondA: "nbe",
	CondS: "s", CondNS: "ns", CondL: "l", CondGE: "nl", CondLE: "le", CondG: "nle",
}
