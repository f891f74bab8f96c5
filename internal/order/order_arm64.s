//go:build arm64 && !race

#include "textflag.h"

// func StoreOrdered64(p *uint64, v uint64)
TEXT ·StoreOrdered64(SB), NOSPLIT, $0-16
	MOVD	p+0(FP), R0
	MOVD	v+8(FP), R1
	STLR	R1, (R0)
	DMB	$0xa // ISHST
	RET

// func LoadFence()
TEXT ·LoadFence(SB), NOSPLIT, $0-0
	DMB	$0x9 // ISHLD
	RET
