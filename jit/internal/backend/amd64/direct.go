package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// A direct entry (jit.Program.Direct) lets Go call a program's code as an
// ordinary func value:
// func(ctx []byte) (r0 uint64, err error) in Go's internal register ABI,
// with no assembly trampoline, ABI wrapper or frame between them. It is for
// code that cannot fail and needs nothing from a run but r1: stackless
// (it never names r10), flat (no loops, no local calls, so bounded by its
// length), no helpers or packet, no checked memory accesses. Such code
// touches the run state only to spill the budget register around
// divisions and atomics, and the entry gives it a stack slot for that.
//
// The entry gives the code r1 (0 for an empty context) and a budget it
// cannot overdraw. Code that uses r8 or r9, which live in r14 (g) and r15,
// or r6 (rbx, which must be 0 in a nil error), is called: the entry saves
// r14 and r15 and returns r0 with a nil error. Other code is jumped to,
// and returns to Go itself. Either way the entry needs under 100 bytes of
// stack below the caller's frame, well within what Go leaves below every
// frame for functions that skip the stack check.
const directFrame = 24

// directSpill is how far below the caller's stack pointer the budget's
// spill slot is when the entry jumps into the code: below the return
// address and the few words flat code pushes.
const directSpill = 64

// appendDirect returns c's code with the direct entry appended, and the
// entry's offset (backend.Arch.AppendDirect). When
// the code leaves r6, r8 and r9 alone (keepsRegs), the entry jumps into
// it and its return goes straight back to Go: rbx (r6) then still holds
// the 0 of a nil error's first word, and g is still in r14.
func appendDirect(c *backend.Code, p *vm.Program, budget int64, minContext int, shortErr [2]uintptr) ([]byte, int) {
	keepsRegs := keepsRegs(p.Instructions())
	var a x86.Asm
	a.Append(c.Bytes)
	a.Align(16)
	off := a.Len()
	// The slice's pointer, length and capacity arrive in rax, rbx and
	// rcx; r0 leaves in rax and the error's two words in rbx and rcx
	// (the code's exits set rcx to 0, the reason of a normal end).
	short := -1
	if minContext > 0 {
		a.ALURI(x86.CMP, 8, x86.RBX, int32(minContext))
		short = a.Jcc(x86.CondB)
	}
	if !keepsRegs {
		a.ALURI(x86.SUB, 8, x86.RSP, directFrame)
		a.Store(8, x86.M(x86.RSP, 16), x86.R14)
		a.Store(8, x86.M(x86.RSP, 8), x86.R15)
	}
	a.MovRR(8, regMap[1], x86.RAX)
	a.TestRR(8, x86.RBX, x86.RBX)
	a.JccShort(x86.CondNE, 2)
	a.ALURR(x86.XOR, 4, regMap[1], regMap[1]) // 2 bytes: r1 = 0 for an empty context
	a.MovRI(budgetReg, uint64(budget))
	if keepsRegs {
		a.ALURR(x86.XOR, 4, x86.RBX, x86.RBX)
		// The budget's spill slot is below anything the code pushes.
		a.Lea(stateReg, x86.M(x86.RSP, -directSpill-backend.OffBudget))
		a.PatchRel32(a.Jmp(), c.Body)
	} else {
		a.Lea(stateReg, x86.M(x86.RSP, -backend.OffBudget)) // the spill slot is 0(rsp)
		a.PatchRel32(a.Call(), c.Body)
		a.Load(8, x86.R14, x86.M(x86.RSP, 16))
		a.Load(8, x86.R15, x86.M(x86.RSP, 8))
		a.ALURI(x86.ADD, 8, x86.RSP, directFrame)
		a.ALURR(x86.XOR, 4, x86.RBX, x86.RBX) // a nil error
		a.Ret()
	}
	if short >= 0 {
		a.PatchRel32(short, a.Len())
		// The error's words are constants: the Program keeps the error
		// alive, and the Go heap does not move.
		a.ALURR(x86.XOR, 4, x86.RAX, x86.RAX)
		a.MovRI(x86.RBX, uint64(shortErr[0]))
		a.MovRI(x86.RCX, uint64(shortErr[1]))
		a.Ret()
	}
	return a.Bytes(), off
}

// keepsRegs reports whether insns never name r6, r8 or r9.
func keepsRegs(insns []asm.Instruction) bool {
	for _, ins := range insns {
		for _, r := range [2]uint8{ins.Dst, ins.Src} {
			if r == asm.R6 || r == asm.R8 || r == asm.R9 {
				return false
			}
		}
	}
	return true
}
