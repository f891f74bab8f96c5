//go:build amd64 && !race

#include "textflag.h"

// func StoreRelease32(p *uint32, v uint32)
TEXT ·StoreRelease32(SB), NOSPLIT, $0-12
	MOVQ	p+0(FP), AX
	MOVL	v+8(FP), BX
	MOVL	BX, 0(AX)
	RET

// func StoreRelease64(p *uint64, v uint64)
TEXT ·StoreRelease64(SB), NOSPLIT, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, 0(AX)
	RET

// func StoreOrdered64(p *uint64, v uint64)
TEXT ·StoreOrdered64(SB), NOSPLIT, $0-16
	JMP	·StoreRelease64(SB)

// func Publish(a *uint64, n uint64, b *uint64, h uint64)
TEXT ·Publish(SB), NOSPLIT, $0-32
	MOVQ	a+0(FP), AX
	MOVQ	n+8(FP), BX
	MOVQ	BX, 0(AX)
	MOVQ	b+16(FP), AX
	MOVQ	h+24(FP), BX
	MOVQ	BX, 0(AX)
	RET
