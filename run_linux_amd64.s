#include "textflag.h"
#include "go_asm.h"

// func run(p *Program, ctx []byte) (r0 uint64, err error)
//
// A program that the JIT runs on runFramePlain (Program.plainMin) with a
// long enough context continues there, any other JIT-compiled program in
// the JIT's run: both have this layout with a *jit.Program first, and the
// jump replaces p with p.jit and leaves the rest where it is. The fast path
// has one conditional branch: measured on the benchmark set's shortest
// programs, a second one, or an indirect jump, costs 5-20 %.
TEXT ·run(SB), NOSPLIT|NOFRAME, $0-56
	MOVQ p+0(FP), AX
	MOVQ ctx_len+16(FP), CX
	CMPQ CX, Program_plainMin(AX)
	JLT other
	MOVQ Program_jit(AX), AX
	MOVQ AX, p+0(FP)
	JMP github·com∕uebpf∕uebpf∕jit·runFramePlain(SB)
other:
	CMPQ CX, Program_contextSize(AX)
	JLT slow
	MOVQ Program_jit(AX), AX
	TESTQ AX, AX
	JEQ slow
	MOVQ AX, p+0(FP)
	JMP github·com∕uebpf∕uebpf∕jit·run(SB)
slow:
	JMP ·runSlowABI(SB)
