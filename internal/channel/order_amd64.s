//go:build amd64 && !race

#include "textflag.h"

// func storeRelease64(p *uint64, v uint64)
TEXT ·storeRelease64(SB), NOSPLIT, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, 0(AX)
	RET

// func storeOrdered64(p *uint64, v uint64)
TEXT ·storeOrdered64(SB), NOSPLIT, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, 0(AX)
	RET

// func publish(records *uint64, n uint64, head *uint64, h uint64)
TEXT ·publish(SB), NOSPLIT, $0-32
	MOVQ	records+0(FP), AX
	MOVQ	n+8(FP), BX
	MOVQ	BX, 0(AX)
	MOVQ	head+16(FP), AX
	MOVQ	h+24(FP), BX
	MOVQ	BX, 0(AX)
	RET
