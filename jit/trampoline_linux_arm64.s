#include "textflag.h"
#include "funcdata.h"
#include "go_asm.h"

// func enter(s *runState, stub uintptr)
//
// enter calls stub (the program's start or enter stub) with the state in
// R12. Generated code keeps its return address in the state, leaves
// R18 and R26-R29 (g and the frame pointer among them) and the stack
// pointer alone, and returns with r0 in R0, the reason in R14 and the
// budget in R11, having clobbered the other registers, which ABI0 lets a
// callee clobber. The 16-byte frame makes enter a non-leaf function
// whose prologue saves LR. The native stack of local calls is not on
// this stack but in the run's save area.
TEXT ·enter(SB), NOSPLIT, $16-16
	NO_LOCAL_POINTERS
	MOVD s+0(FP), R12
	MOVD stub+8(FP), R16
	CALL (R16)
	MOVD s+0(FP), R12
	MOVD R0, runState_regs(R12)
	MOVD R14, runState_reason(R12)
	MOVD R11, runState_budget(R12)
	RET
