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

// func syncICache(start, end uintptr)
//
// syncICache makes freshly written code visible to instruction fetch:
// clean the data cache and invalidate the instruction cache by address,
// one word at a time (never larger than a cache line), then synchronize.
// The system instructions are spelled as words.
TEXT ·syncICache(SB), NOSPLIT, $0-16
	MOVD start+0(FP), R0
	MOVD end+8(FP), R1
	MOVD R0, R2
clean:
	WORD $0xd50b7b22 // dc cvau, x2
	ADD  $4, R2
	CMP  R1, R2
	BLO  clean
	WORD $0xd5033b9f // dsb ish
	MOVD R0, R2
inval:
	WORD $0xd50b7522 // ic ivau, x2
	ADD  $4, R2
	CMP  R1, R2
	BLO  inval
	WORD $0xd5033b9f // dsb ish
	WORD $0xd5033fdf // isb
	RET
