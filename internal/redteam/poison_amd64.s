#include "textflag.h"
#include "funcdata.h"

// func callPoisoned(f func([]byte) (uint64, error), ctx []byte, garbage uintptr) (r0 uint64, err error)
TEXT ·callPoisoned(SB), 0, $64-64
	NO_LOCAL_POINTERS
	MOVQ f+0(FP), DX
	MOVQ garbage+32(FP), SI
	MOVQ SI, DI
	MOVQ SI, R8
	MOVQ SI, R9
	MOVQ SI, R10
	MOVQ SI, R11
	MOVQ SI, R12
	MOVQ SI, R13
	MOVQ ctx_base+8(FP), AX
	MOVQ ctx_len+16(FP), BX
	MOVQ ctx_cap+24(FP), CX
	MOVQ (TLS), R14 // g, as the internal ABI wants it
	XORPS X15, X15
	CALL (DX)
	MOVQ AX, r0+40(FP)
	MOVQ BX, err_itable+48(FP)
	MOVQ CX, err_data+56(FP)
	RET
