#include "textflag.h"
#include "funcdata.h"
#include "go_asm.h"

// ROOT_RETURN (defined before any function, where go vet does not check
// it against one) returns the results of runRoot and runRootStackless: r0
// and a nil error, or after failed, what frameError returned for the
// *Program in the first field of their p. Their code
// leaves the frame pointer alone (it makes no local calls), so frameError
// needs no FRAME_ERROR.
#define ROOT_RETURN \
	MOVQ AX, r0+24(FP); \
	XORPS X0, X0; \
	MOVUPS X0, err_itable+32(FP); \
	RET; \
failed: \
	MOVQ p+0(FP), R8; \
	MOVQ (R8), R8; \
	MOVQ ctx+8(FP), R9; \
	MOVQ n+16(FP), R10; \
	FRAME_ERROR_CALL; \
	MOVQ 56(SP), AX; \
	MOVQ AX, r0+24(FP); \
	MOVQ 64(SP), AX; \
	MOVQ AX, err_itable+32(FP); \
	MOVQ 72(SP), AX; \
	MOVQ AX, err_data+40(FP); \
	RET

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

// func execLean(s *runState, start uintptr, budget uint64) (r0, reason uint64)
//
// execLean runs a lean program with the Env whose state is s, as enter
// does, from its start stub with budget, and records what a run that
// exits executed in the Env. A run that fails leaves r0, its reason and
// what is left of the budget in the state, for Exec to build the error
// from. With the results in registers, a run stores 4 fewer words than
// with enter.
TEXT ·execLean(SB), NOSPLIT, $const_nativeStackBytes-40
	NO_LOCAL_POINTERS
	MOVQ s+0(FP), R12
	MOVQ start+8(FP), AX
	MOVQ budget+16(FP), DX
	MOVQ DX, runState_budget(R12) // the start stub loads it from there
	LEAQ (const_nativeStackBytes-8)(SP), CX
	MOVQ CX, runState_nativeBase(R12)
	ADDQ $const_nativeStackBytes, SP
	CALL AX
	SUBQ $const_nativeStackBytes, SP
	MOVQ CX, reason+32(FP)
	TESTQ CX, CX
	JNE failed
	MOVQ budget+16(FP), BX
	SUBQ DX, BX
	MOVQ BX, const_envExecuted(R12)
	MOVQ AX, r0+24(FP)
	RET
failed:
	MOVQ AX, runState_regs(R12)
	MOVQ CX, runState_reason(R12)
	MOVQ DX, runState_budget(R12)
	RET

// func run(p *Program, ctx []byte) (r0 uint64, err error)
//
// run continues where p.path says, with its arguments and results where
// they are: runFramePlain, runFrame and runEnv have its signature. A
// context shorter than the one p was verified for goes to runShort
// instead: checked here rather than in Program.Run, whose Go check made
// it too costly to inline.
TEXT ·run(SB), NOSPLIT|NOFRAME, $0-56
	MOVQ p+0(FP), AX
	MOVQ ctx_len+16(FP), CX
	CMPQ CX, Program_minContext(AX)
	JGE 2(PC)
	JMP ·runShort(SB)
	CMPB Program_path(AX), $const_pathPlain
	JLT 2(PC)
	JMP ·runFramePlain(SB) // pathPlain or pathStackless
	CMPB Program_path(AX), $const_pathFrame
	JNE 2(PC)
	JMP ·runFrame(SB)
	JMP ·runEnv(SB)

// func runPointer(p *Program, ctx unsafe.Pointer, size, _ uintptr) (r0 uint64, err error)
TEXT ·runPointer(SB), NOSPLIT|NOFRAME, $0-56
	JMP ·run(SB)

// func runEnv(p *Program, ctx []byte) (r0 uint64, err error)
//
// runEnv is run for programs that are not lean (or closed).
TEXT ·runEnv(SB), NOSPLIT|NOFRAME, $0-56
	// An empty context is r1 = 0 (RunPointer takes the other path).
	MOVQ ctx_len+16(FP), AX
	TESTQ AX, AX
	JNE 2(PC)
	MOVQ AX, ctx_base+8(FP)
	JMP ·runEnvABI(SB)

// FRAME_START is the part of the runFrame* functions before any
// frameSetup work, with the *Program in AX and r1 in DI: the state, the
// budget and the body's address in R11.
#define FRAME_START \
	LEAQ const_frameState(SP), R12; \
	MOVQ Program_budget(AX), DX; \
	MOVQ Program_entry(AX), R11

// R1_OF_SLICE sets r1 (DI) to the context's address, 0 if it is empty.
#define R1_OF_SLICE \
	MOVQ ctx_base+8(FP), DI; \
	MOVQ ctx_len+16(FP), CX; \
	TESTQ CX, CX; \
	CMOVQEQ CX, DI

// FRAME_CALL calls the body, and continues at failed when it returns a
// reason (in CX).
#define FRAME_CALL \
	LEAQ const_frameBytes(SP), BP; \
	CALL R11; \
	TESTQ CX, CX; \
	JNE failed

// FRAME_ERROR calls frameError(p, ctx, n, reason, pc, addr, size) for a
// run that ended with the reason in CX, with p and the context from the
// arguments, and its arguments and results (at 56, 64 and 72(SP)) at the
// bottom of the frame (the copies of Env fields, which nothing reads any
// more; the state starts above them). The frame pointer is restored
// first: an error inside a local call leaves it at that call's r10.
#define FRAME_ERROR \
	LEAQ const_frameBytes(SP), BP; \
	MOVQ p+0(FP), R8; \
	MOVQ ctx_base+8(FP), R9; \
	MOVQ ctx_len+16(FP), R10; \
	FRAME_ERROR_CALL

// FRAME_ERROR_CALL is FRAME_ERROR for code that leaves the frame
// pointer alone, with p in R8 and the context in R9 and R10.
#define FRAME_ERROR_CALL \
	MOVQ R8, 0(SP); \
	MOVQ R9, 8(SP); \
	MOVQ R10, 16(SP); \
	MOVQ CX, 24(SP); \
	MOVQ runState_exitPC(R12), AX; \
	MOVQ AX, 32(SP); \
	MOVQ runState_exitAddr(R12), AX; \
	MOVQ AX, 40(SP); \
	MOVQ runState_exitSize(R12), AX; \
	MOVQ AX, 48(SP); \
	CALL ·frameError(SB)

// FRAME_RETURN returns the results of the runFrame* functions with the
// slice layout: r0 and a nil error, or after failed, what frameError
// returned.
#define FRAME_RETURN \
	MOVQ AX, r0+32(FP); \
	XORPS X0, X0; \
	MOVUPS X0, err_itable+40(FP); \
	RET; \
failed: \
	FRAME_ERROR; \
	MOVQ 56(SP), AX; \
	MOVQ AX, r0+32(FP); \
	MOVQ 64(SP), AX; \
	MOVQ AX, err_itable+40(FP); \
	MOVQ 72(SP), AX; \
	MOVQ AX, err_data+48(FP); \
	RET

// func runRoot(p unsafe.Pointer, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)
//
// runRoot is runFramePlain for the root package's Program.Run, which
// jumps here with its own arguments: p is a *uebpf.Program, whose first
// field is its *Program, and the context is an address and a length (no
// capacity to store). It takes no other path.
TEXT ·runRoot(SB), $4464-48 // frameBytes
	NO_LOCAL_POINTERS
	MOVQ p+0(FP), AX
	MOVQ (AX), AX
	MOVQ ctx+8(FP), DI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	CMOVQEQ CX, DI
	FRAME_START
	FRAME_CALL
	ROOT_RETURN

// func runRootStackless(p unsafe.Pointer, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)
//
// runRootStackless is runRoot for code that never names r10 and so needs
// no eBPF stack, and never changes the frame pointer (pathStackless): its
// frame is the Env copy and the state (frameRegion bytes), small enough
// for NOSPLIT, so it has no stack check. The code's native stack, a
// return address (the code is flat), is below the frame, in the room the
// linker's NOSPLIT analysis leaves.
TEXT ·runRootStackless(SB), NOSPLIT, $336-48 // frameRegion
	NO_LOCAL_POINTERS
	MOVQ p+0(FP), AX
	MOVQ (AX), AX
	MOVQ ctx+8(FP), DI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	CMOVQEQ CX, DI
	FRAME_START
	CALL R11
	TESTQ CX, CX
	JNE failed
	ROOT_RETURN

// func runFramePlain(p *Program, ctx []byte) (r0 uint64, err error)
//
// runFramePlain is runFrame for a program with nothing to set up
// (Program.frameSetup is 0) that does not read r2 before writing it and
// leaves only from the base of its native stack (compiler.flat), which it
// does not record: the fastest run there is.
TEXT ·runFramePlain(SB), $4464-56 // frameBytes
	NO_LOCAL_POINTERS
	MOVQ p+0(FP), AX
	R1_OF_SLICE
	FRAME_START
	FRAME_CALL
	FRAME_RETURN

// func runFrame(p *Program, ctx []byte) (r0 uint64, err error)
//
// runFrame runs p, a lean program (see Program.lean), with everything on
// its own frame: copies of the Env fields generated code reads (the
// stack's address, the region list, the packet), the state, a region list
// with the context as its only entry and the eBPF stack (see the frame*
// constants). It does what the start stub does (emitStartCode) with the
// arguments at hand, setting only what p's code reads
// (Program.frameSetup), and calls the body. It is not NOSPLIT: its
// prologue grows the goroutine stack if the frame does not fit, before
// generated code runs, and nothing can move the stack while generated code
// runs (it is not Go code). The code's native stack (at most
// nativeStackBytes) is below the frame, in the StackLimit bytes the
// prologue's check leaves free below SP for NOSPLIT callees: runFrame
// calls the code where its stack pointer is. When generated code returns
// an error, runFrame calls frameError (Go) for it, with the exit pc,
// address and size from the state, which dies with the frame; the frame
// holds no Go pointers. runFrame never writes SP itself (the assembler
// would mark it SPWRITE, and the runtime could not unwind through it
// while frameError runs); generated code writes it only to come back to
// the return address of its call.
TEXT ·runFrame(SB), $4464-56 // frameBytes (go vet wants a number)
	NO_LOCAL_POINTERS
	MOVQ p+0(FP), AX
	R1_OF_SLICE
	FRAME_START
	LEAQ -8(SP), CX // where CALL R11 puts its return address
	MOVQ CX, runState_nativeBase(R12)
	MOVQ ctx_len+16(FP), SI // r2
	MOVBLZX Program_frameSetup(AX), BX
	TESTL BX, BX
	JNE setup
start:
	FRAME_CALL
	FRAME_RETURN
setup:
	XORL AX, AX
	TESTL $const_frameSetupChecked, BX
	JEQ packet
	LEAQ const_frameStack(SP), CX
	MOVQ CX, const_frameStackLo(SP)
	MOVQ AX, runState_hotReadEnd(R12) // no region allowed the last access
	MOVQ AX, runState_hotWriteEnd(R12)
	// The context is the only region, unless it is empty (or wraps).
	MOVQ DI, const_frameRegionLo(SP)
	LEAQ (DI)(SI*1), CX
	MOVQ CX, const_frameRegionHi(SP)
	MOVB $1, const_frameRegionWritable(SP)
	CMPQ CX, DI
	SETHI AX
	MOVQ AX, const_frameNRegion(SP)
	LEAQ const_frameRegion(SP), CX
	MOVQ CX, const_frameRegions(SP)
	XORL AX, AX
packet:
	TESTL $const_frameSetupPacket, BX
	JEQ zero
	MOVQ AX, const_framePacket(SP) // no packet
	MOVQ AX, const_framePktLen(SP)
zero:
	TESTL $const_frameSetupZeroStack, BX
	JEQ clear
	LEAQ const_frameStack(SP), CX
	LEAQ const_frameBytes(SP), R8
	MOVQ $0, (CX)
	ADDQ $8, CX
	CMPQ CX, R8
	JB -3(PC)
clear:
	// The registers the code may read before writing them start at 0
	// (r1 and r2 are the context's address and length).
	TESTL $const_frameSetupClear, BX
	JEQ start
	XORL AX, AX
	XORL BX, BX
	XORL R8, R8
	XORL R9, R9
	XORL R10, R10
	XORL R13, R13
	XORL R14, R14
	XORL R15, R15
	JMP start
