#include "textflag.h"
#include "go_asm.h"

// func run(p *Program, ctx []byte) (r0 uint64, err error)
//
// A JIT-compiled program (Program.jitMin) with a long enough context
// continues where the JIT's run would, at the address in the first field
// of the *jit.Program (jit.Program.runEntry): every entry there has this
// layout with a *jit.Program first, and the jump replaces p with p.jit and
// leaves the rest where it is.
TEXT ·run(SB), NOSPLIT|NOFRAME, $0-56
	MOVQ p+0(FP), AX
	MOVQ ctx_len+16(FP), CX
	CMPQ CX, Program_jitMin(AX)
	JLT slow
	MOVQ Program_jit(AX), AX
	MOVQ AX, p+0(FP)
	JMP (AX)
slow:
	JMP ·runSlowABI(SB)
