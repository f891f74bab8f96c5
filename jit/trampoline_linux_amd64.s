#include "textflag.h"
#include "funcdata.h"
#include "go_asm.h"

// func enter(s *runState, stub uintptr)
//
// enter runs generated code until it returns to Go. It calls stub (the
// program's enter stub) with the state in r12 and the stack pointer at the
// top of its own frame: the frame is the native stack of generated code.
// enter is NOSPLIT with that frame size, so the linker proves that the
// goroutine stack has room for it, and generated code never goes below it
// (local calls are at most 7 deep). Generated code returns with r0 in AX
// and the reason in CX, having clobbered every register but r12 and SP.
// The Go compiler restores g (r14) and X15 after calls to ABI0 functions,
// and the epilogue restores BP from the frame, which generated code leaves
// alone. None of this is Go code the scheduler could preempt, and the frame
// holds no Go pointers.
TEXT ·enter(SB), NOSPLIT, $const_nativeStackBytes-16
	NO_LOCAL_POINTERS
	MOVQ s+0(FP), R12
	MOVQ stub+8(FP), AX
	LEAQ (const_nativeStackBytes-8)(SP), CX
	MOVQ CX, runState_nativeBase(R12)
	ADDQ $const_nativeStackBytes, SP
	CALL AX
	SUBQ $const_nativeStackBytes, SP
	MOVQ AX, runState_regs(R12)
	MOVQ CX, runState_reason(R12)
	MOVQ DX, runState_budget(R12)
	RET
