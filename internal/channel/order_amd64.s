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
