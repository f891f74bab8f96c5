// call lets TestExecute (exec_linux_arm64_test.go) run encoder output;
// SyncICache is the JIT's too.

#include "textflag.h"

// func call(code uintptr) uint64
//
// A frame of 16 bytes makes this a non-leaf function whose prologue saves
// LR, which BLR overwrites.
TEXT ·call(SB), NOSPLIT, $16-16
	MOVD code+0(FP), R1
	CALL (R1)
	MOVD R0, ret+8(FP)
	RET

// func syncICache(start, end uintptr)
//
// Makes freshly written code visible to instruction fetch: clean the data
// cache and invalidate the instruction cache by address, one word at a
// time (never larger than a cache line), then synchronize. The system
// instructions are spelled as words.
TEXT ·SyncICache(SB), NOSPLIT, $0-16
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
