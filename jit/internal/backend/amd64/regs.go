package amd64

import "github.com/uebpf/uebpf/jit/internal/x86"

// regMap assigns an x86-64 register to each eBPF register. r10, the frame
// pointer, lives in rbp. rcx and r11 are scratch registers, so shifts by cl
// need no juggling of eBPF registers; rdx holds the instruction budget and
// is spilled around the rare instructions that need it (division,
// fetch-and-op loops, the region check).
var regMap = [11]x86.Reg{
	x86.RAX, // r0
	x86.RDI, // r1
	x86.RSI, // r2
	x86.R8,  // r3
	x86.R9,  // r4
	x86.R10, // r5
	x86.RBX, // r6
	x86.R13, // r7
	x86.R14, // r8
	x86.R15, // r9
	x86.RBP, // r10
}

const (
	tmpC      = x86.RCX // scratch
	budgetReg = x86.RDX // budget left minus the slots of the current block
	tmpD      = x86.RDX // scratch, where the budget has been spilled
	tmpAddr   = x86.R11 // scratch: addresses and materialised immediates
	stateReg  = x86.R12 // *runState for the whole run
)

func st(off int32) x86.Mem { return x86.M(stateReg, off) }
