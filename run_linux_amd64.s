#include "textflag.h"
#include "go_asm.h"

// func run(p *Program, ctx []byte) (r0 uint64, err error)
//
// A JIT-compiled program with a long enough context continues in the
// JIT's runFrame when it is lean (Program.jitLean), else in the JIT's run;
// both have this layout with a *jit.Program first: the jump replaces p
// with p.jit and leaves the rest where it is.
TEXT ·run(SB), NOSPLIT|NOFRAME, $0-56
	MOVQ p+0(FP), AX
	MOVQ ctx_len+16(FP), CX
	CMPQ CX, Program_contextSize(AX)
	JLT slow
	CMPB Program_jitLean(AX), $0
	JEQ full
	MOVQ Program_jit(AX), AX
	MOVQ AX, p+0(FP)
	JMP github·com∕uebpf∕uebpf∕jit·runFrame(SB)
full:
	MOVQ Program_jit(AX), AX
	TESTQ AX, AX
	JEQ slow
	MOVQ AX, p+0(FP)
	JMP github·com∕uebpf∕uebpf∕jit·run(SB)
slow:
	JMP ·runSlowABI(SB)
