#include "textflag.h"
#include "go_asm.h"

// func run(p *Program, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)
//
// A program that the JIT runs on one of its plain frames
// (Program.stacklessMin, plainMin) with a long enough context continues in
// the JIT's runRootStackless or runRoot, which take these arguments as
// they are; one with a direct entry but no plain frame (directMin:
// checked code that reads memory) in runDirectABI; any other in
// runSlowABI. The fastest path has one conditional
// branch: measured on the benchmark set's shortest programs, a second one,
// or an indirect jump, costs 5-20 %.
TEXT ·run(SB), NOSPLIT|NOFRAME, $0-48
	MOVQ p+0(FP), AX
	MOVQ n+16(FP), CX
	CMPQ CX, Program_stacklessMin(AX)
	JLT 2(PC)
	JMP github·com∕uebpf∕uebpf∕jit·runRootStackless(SB)
	CMPQ CX, Program_plainMin(AX)
	JLT 2(PC)
	JMP github·com∕uebpf∕uebpf∕jit·runRoot(SB)
	CMPQ CX, Program_directMin(AX)
	JLT slow
	JMP ·runDirectABI(SB)
slow:
	JMP ·runSlowABI(SB)
