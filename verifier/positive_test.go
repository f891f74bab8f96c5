package verifier_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

var positiveSuite = []struct {
	name string
	src  string
	opts *verifier.Options
}{
	{"return constant", "mov %r0, 1\nexit", nil},
	{"read context", "ldxdw %r0, [%r1+56]\nexit", nil},
	{"write context", "stdw [%r1+0], 7\nmov %r0, 0\nexit", nil},
	{"stack roundtrip", "stdw [%r10-8], 42\nldxdw %r0, [%r10-8]\nexit", nil},
	{"spill and fill pointer", "stxdw [%r10-8], %r1\nldxdw %r2, [%r10-8]\nldxb %r0, [%r2+3]\nexit", nil},
	{"byte stores then word load", "stb [%r10-1], 1\nstb [%r10-2], 2\nsth [%r10-4], 3\nldxw %r0, [%r10-4]\nexit", nil},
	{"lookup and null check", lookup + "jeq %r0, 0, +2\nldxdw %r0, [%r0+8]\nexit\nmov %r0, 0\nexit", nil},
	{"null check on copy", lookup + "mov %r6, %r0\njeq %r0, 0, +2\nldxdw %r0, [%r6+8]\nexit\nmov %r0, 0\nexit", nil},
	{"bounded index into value", lookup + "jeq %r0, 0, +6\nldxdw %r1, [%r0+0]\njgt %r1, 15, +3\nadd %r0, %r1\nldxb %r0, [%r0+0]\nexit\nmov %r0, 0\nexit", nil},
	{"masked index", lookup + "jeq %r0, 0, +5\nldxdw %r1, [%r0+0]\nand %r1, 7\nadd %r0, %r1\nldxdw %r0, [%r0+0]\nexit\nmov %r0, 0\nexit", nil},
	{"update", "stw [%r10-4], 1\nstdw [%r10-16], 5\nstdw [%r10-24], 6\nlddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -24\nmov %r4, 0\ncall 2\nexit", nil},
	{"rodata read", "lddw %r1, map_val_by_fd(4)\nldxb %r0, [%r1+0]\nexit", nil},
	{"data write", "lddw %r1, map_val_by_fd(5)+8\nstdw [%r1+0], 1\nmov %r2, 1\nlock add [%r1+0], %r2\nmov %r0, 0\nexit", nil},
	{"snprintf with rodata format", "stdw [%r10-8], 0\nstdw [%r10-16], 1\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\nlddw %r3, map_val_by_fd(4)\nmov %r4, %r10\nadd %r4, -16\nmov %r5, 8\ncall 165\nexit", nil},
	{"ringbuf reserve submit", reserve + "jeq %r0, 0, +5\nstdw [%r0+8], 1\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit", nil},
	{"ringbuf discard", reserve + "jne %r0, 0, +2\nmov %r0, 0\nexit\nmov %r1, %r0\nmov %r2, 0\ncall 133\nmov %r0, 1\nexit", nil},
	{"helper fills stack", "mov %r1, %r10\nadd %r1, -16\nmov %r2, 16\ncall 16\nldxdw %r0, [%r10-16]\nexit", nil},
	{"tail call", "lddw %r2, map_by_fd(3)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", nil},
	{"bounded loop", "mov %r0, 0\nmov %r2, 0\nl:\nadd %r0, %r2\nadd %r2, 1\njlt %r2, 100, l\nexit", nil},
	{"loop over context", "mov %r0, 0\nmov %r2, 0\nl:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3+0]\nadd %r0, %r4\nadd %r2, 1\njlt %r2, 64, l\nexit", nil},
	{"32-bit loop", "mov32 %r0, 0\nmov32 %r2, 10\nl:\nadd32 %r0, 3\nsub32 %r2, 1\njne32 %r2, 0, l\nexit", nil},
	{"loop with lookups", "mov %r6, 0\nmov %r7, 0\nl:\nstxw [%r10-4], %r6\nlddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -4\ncall 1\njeq %r0, 0, +2\nldxdw %r1, [%r0+0]\nadd %r7, %r1\nadd %r6, 1\njlt %r6, 4, l\nmov %r0, %r7\nexit", nil},
	{"bpf-to-bpf call", "mov %r1, 5\ncall local sq\nexit\nsq:\nmov %r0, %r1\nmul %r0, %r1\nexit", nil},
	{"callee writes caller stack", "mov %r1, %r10\nadd %r1, -8\ncall local f\nldxdw %r0, [%r10-8]\nexit\nf:\nstdw [%r1+0], 9\nmov %r0, 0\nexit", nil},
	{"callee preserves r6", "mov %r6, %r1\ncall local f\nldxb %r0, [%r6+0]\nexit\nf:\nmov %r6, 1\nmov %r0, 0\nexit", nil},
	{"callee own stack", "call local f\nexit\nf:\nstdw [%r10-512], 1\nldxdw %r0, [%r10-512]\nexit", nil},
	{"nested calls", "call local a\nexit\na:\ncall local b\nadd %r0, 1\nexit\nb:\nmov %r0, 1\nexit", nil},
	{"callee returns map value", "call local f\njeq %r0, 0, +2\nldxdw %r0, [%r0+0]\nexit\nmov %r0, 0\nexit\nf:\n" + lookup + "exit", nil},
	{"signed compare bound", "ldxsb %r2, [%r1+0]\njsgt %r2, 10, +6\njslt %r2, 0, +5\nlddw %r3, map_val_by_fd(5)\nadd %r3, %r2\nldxb %r0, [%r3+0]\nexit\nmov %r0, 1\nexit", nil},
	{"pointer leak allowed", "mov %r0, %r1\nexit", &verifier.Options{AllowPointerLeaks: true}},
	{"ctx length in r2", "mov %r0, %r2\nexit", &verifier.Options{ContextSize: 8, ContextLengthInR2: true}},
	{"atomics on stack", "stdw [%r10-8], 0\nmov %r2, 1\nlock fetch add [%r10-8], %r2\nmov %r0, 0\nlock cmpxchg [%r10-8], %r2\nexit", nil},
	{"app helper", "stdw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\ncall 0x10000\nexit", nil},
	{"dead branch by constant", "mov %r2, 1\njeq %r2, 1, +1\nldxdw %r0, [%r10-8]\nmov %r0, 0\nexit", nil},
	{"bpf_loop counts into the stack", "stdw [%r10-8], 0\nmov %r1, 10\nlddw %r2, code_addr(+7)\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0\ncall 181\nldxdw %r0, [%r10-8]\nexit\nldxdw %r3, [%r2+0]\nadd %r3, %r1\nstxdw [%r2+0], %r3\nmov %r0, 0\nexit", nil},
	{"bpf_loop stops early", "mov %r1, 100\nlddw %r2, code_addr(+5)\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit\nmov %r0, 0\njlt %r1, 3, +1\nmov %r0, 1\nexit", nil},
	{"jmp32 bounds the low half", "ldxdw %r2, [%r1+0]\njgt32 %r2, 15, +6\nmov32 %r2, %r2\nlddw %r3, map_val_by_fd(5)\nadd %r3, %r2\nldxb %r0, [%r3+0]\nexit\nmov %r0, 0\nexit", nil},
	{"diamond pruning", "ldxb %r2, [%r1+0]\nmov %r0, 0\njeq %r2, 1, +1\nmov %r0, 1\nldxb %r3, [%r1+1]\njeq %r3, 1, +1\nadd %r0, 2\nexit", nil},
}

func TestPositiveSuite(t *testing.T) {
	for _, tc := range positiveSuite {
		t.Run(tc.name, func(t *testing.T) {
			p := loadAsm(t, tc.src)
			opts := tc.opts
			if opts == nil {
				opts = &verifier.Options{ContextSize: testCtxSize}
			}
			res, err := verifier.Verify(p, opts)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if res.InstructionsProcessed == 0 {
				t.Error("no instructions processed")
			}
			env := vm.NewEnv()
			env.SetContext(make([]byte, opts.ContextSize))
			if _, err := p.Exec(env); err != nil {
				t.Errorf("verified program failed in the checked interpreter: %v", err)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	p := loadAsm(t, "mov %r2, 1\nldxdw %r0, [%r1+64]\nexit")
	var log bytes.Buffer
	_, err := verifier.Verify(p, &verifier.Options{ContextSize: 64, Log: &log,
		LineInfo: func(pc int) string { return fmt.Sprintf("prog.c:%d: x = ctx->data[8];", 10+pc) }})
	ve, ok := err.(*verifier.Error)
	if !ok {
		t.Fatalf("err = %v", err)
	}
	if ve.PC != 1 || ve.Insn != "ldxdw %r0, [%r1+64]" || ve.Line != "prog.c:11: x = ctx->data[8];" ||
		!strings.Contains(ve.State, "R1=ctx() R2=1 R10=fp0") {
		t.Errorf("error fields: %+v", ve)
	}
	for _, want := range []string{"at 1: ldxdw %r0, [%r1+64]", "source: prog.c:11", "state: R1=ctx() R2=1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if !strings.Contains(log.String(), "0: mov %r2, 1") {
		t.Errorf("log lacks the first instruction:\n%s", log.String())
	}
}

func BenchmarkStraightLine100k(b *testing.B) {
	insns := make([]asm.Instruction, 0, 100_000)
	for len(insns) < 100_000-2 {
		insns = append(insns,
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: asm.R0, Imm: 1},
			asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: asm.R10, Src: asm.R0, Offset: -8},
			asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeDW, Dst: asm.R2, Src: asm.R10, Offset: -8},
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: asm.R0, Src: asm.R2},
		)
	}
	insns = append(insns[:100_000-1], asm.Instruction{Opcode: asm.OpExit})
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := verifier.Verify(p, &verifier.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBoundedLoop1000(b *testing.B) {
	p := loadAsm(b, "mov %r0, 0\nmov %r2, 0\nl:\nadd %r0, %r2\nstxdw [%r10-8], %r0\nadd %r2, 1\njlt %r2, 1000, l\nexit")
	b.ResetTimer()
	var res *verifier.Result
	for b.Loop() {
		var err error
		if res, err = verifier.Verify(p, &verifier.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.InstructionsProcessed), "insns")
}
