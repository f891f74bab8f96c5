package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// A direct entry (jit.Program.Direct) lets Go call a program's code as an
// ordinary func value:
// func(ctx []byte) (r0 uint64, err error) in Go's internal register ABI,
// with no assembly trampoline, ABI wrapper or frame between them. It is for
// code that cannot fail and needs nothing from a run but r1: stackless
// (it never names r10), flat (no local calls), no helpers or packet, no
// checked memory accesses. Loop-free code touches the run state only to
// spill the budget register around divisions and atomics, and the entry
// gives it a stack slot for that. Code with loops (resumable) gets one
// slice of the budget and a whole run state below the stack, and its
// leaves, which the back end made test for this entry (emitDirectLeave),
// continue in Go. Checked reads of code that stores nothing, and loops
// the back end did not prepare so (see mayBeDirect), take the entry of
// appendFallbackDirect instead, which calls the code and can continue
// in Go; loops that name r6, r8 or r9 get none.
//
// The entry gives the code r1 (0 for an empty context) and a budget it
// cannot overdraw. Code that uses r8 or r9, which live in r14 (g) and r15,
// or r6 (rbx, which must be 0 in a nil error), is called: the entry saves
// r14 and r15 and returns r0 with a nil error. Other code is entered
// without a call, and returns to Go itself: the entry is written into the
// room the back end left right before the body (Code.DirectRoom) and
// falls into it, or where there is none, jumps to it. Either way the
// entry needs under 100 bytes of stack below the caller's frame, well
// within what Go leaves below every frame for functions that skip the
// stack check.
const directFrame = 24

// directSpill is how far below the caller's stack pointer the budget's
// spill slot is when the entry jumps into the code: below the return
// address and the few words flat code pushes.
const directSpill = 64

// directState is how far below the caller's stack pointer the entry of
// resumable code puts the run state (stateReg): the whole state, which
// a slice's end writes, below the words flat code pushes. The context's
// pointer and length, for the fallback, go in two of its fields that
// only code with calls writes, which flat code has none of.
const (
	directState  = directSpill + backend.StateSize
	directCtxPtr = backend.OffCallLimit
	directCtxLen = backend.OffProgTag
)

// appendDirect returns c's code with the direct entry in it, and the
// entry's offset (backend.Arch.AppendDirect). When the code leaves r6, r8
// and r9 alone (keepsRegs), the entry enters it without a call and its
// return goes straight back to Go: rbx (r6) then still holds the 0 of a
// nil error's first word, and g is still in r14.
func appendDirect(c *backend.Code, p *vm.Program, d backend.Direct) ([]byte, int) {
	budget, minContext, shortErr := d.Budget, d.MinContext, d.ShortErr
	keepsRegs := keepsRegs(p.Instructions())
	r1 := r1Of(c.LiveIn&(1<<1) != 0, minContext)
	var a x86.Asm
	a.Append(c.Bytes)
	a.Align(16)
	resumable := c.Resumable && !d.Checked && c.DirectLeave != 0
	if (c.Resumable || d.Checked) && !resumable {
		if !keepsRegs {
			return c.Bytes, -1
		}
		return appendFallbackDirect(&a, c, p, d)
	}
	if resumable {
		// The code leaves through DirectLeave, which goes on here when
		// the direct entry ran it (see emitDirectLeave).
		a.PatchRel32(c.DirectLeave, a.Len())
		emitDirectFallback(&a, d)
	}
	if keepsRegs && c.DirectRoom != 0 {
		// Assemble the entry at the end, then move it into the room so
		// that it ends at the body: nothing in it is relative to its
		// address but the jump to the short-context path, patched after.
		start := a.Len()
		short := emitDirectEntry(&a, budget, minContext, r1, resumable)
		n := a.Len() - start
		if n <= c.Body-c.DirectRoom {
			off := c.Body - n
			b := a.Bytes()
			copy(b[off:], b[start:a.Len()])
			a.Truncate(start)
			if short >= 0 {
				short += off - start
				a.PatchRel32(short, a.Len())
				emitShortContext(&a, shortErr)
			}
			return a.Bytes(), off
		}
		a.Truncate(start)
	}
	off := a.Len()
	short := -1
	if keepsRegs {
		short = emitDirectEntry(&a, budget, minContext, r1, resumable)
		a.PatchRel32(a.Jmp(), c.Body)
	} else {
		short = emitDirectCheck(&a, minContext)
		a.ALURI(x86.SUB, 8, x86.RSP, directFrame)
		a.Store(8, x86.M(x86.RSP, 16), x86.R14)
		a.Store(8, x86.M(x86.RSP, 8), x86.R15)
		emitDirectArgs(&a, budget, r1)
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
		emitShortContext(&a, shortErr)
	}
	return a.Bytes(), off
}

// appendFallbackDirect appends the direct entry of code that may come
// back with a reason, resumable or checked code that leaves r6, r8 and r9
// alone, to a (which holds the code) and returns the code and the entry's
// offset. It runs the code as runRootStackless or runFrame does, with one
// slice of the budget (d.Budget) or, for code that is not resumable, all
// of it, and calls it, so that a run that comes back with a reason (the
// slice ran out, or a checked access failed) continues in Go
// (d.Fallback), which runs it again from the start with an Env: the code
// stores nothing (it is lean and never names r10, and checked code has
// no store at all), so the first attempt left nothing behind, and the
// goroutine comes back to Go within a slice, as from runRootStackless.
// The whole run state is below the code's native stack, which is its
// return address and the few words flat code or a checked access's slow
// path pushes (directSpill), below the context's two words the entry
// pushes: 296 bytes below the caller's frame; for checked code, the Env
// fields the checks read and the context's region entry below the
// state, 456 bytes; within the 800 Go leaves below every frame that
// checked the stack.
func appendFallbackDirect(a *x86.Asm, c *backend.Code, p *vm.Program, d backend.Direct) ([]byte, int) {
	off := a.Len()
	short := emitDirectCheck(a, d.MinContext)
	a.Push(x86.RAX) // the context's pointer and length, for the fallback
	a.Push(x86.RBX)
	// r1 always: the checks' context region starts there.
	emitDirectArgs(a, d.Budget, r1Of(true, d.MinContext))
	a.Lea(stateReg, x86.M(x86.RSP, -8-directSpill-backend.StateSize))
	if d.Checked {
		emitDirectRegions(a, d.NoStack, hotSlack(c, p))
	}
	a.PatchRel32(a.Call(), c.Body)
	a.TestRR(8, tmpC, tmpC) // the reason
	a.JccShort(x86.CondNE, 0)
	slow := a.Len()
	a.ALURI(x86.ADD, 8, x86.RSP, 16)
	a.ALURR(x86.XOR, 4, x86.RBX, x86.RBX) // a nil error (rcx is 0)
	a.Ret()
	a.Bytes()[slow-1] = byte(a.Len() - slow)
	a.Pop(x86.RCX)
	a.Pop(x86.RBX)
	callFallback(a, d)
	if short >= 0 {
		a.PatchRel32(short, a.Len())
		emitShortContext(a, d.ShortErr)
	}
	return a.Bytes(), off
}

// directRegion is where the entry of checked code puts the context's
// region entry, below the copies of the Env fields the checks read
// (engine.*Offset from the state, all within ArgsOffset of it).
const directRegion = engine.ArgsOffset - int32(engine.RegionSize)

// emitDirectRegions sets up what the checks of checked code read, as
// runFrame does for Run, with r1 in rdi and the context's length in rbx:
// the region list, whose only entry is the context (empty when the
// context is, so it allows nothing), the stack (noStack: a run never
// names r10, and nothing but a guessed address reaches the stack there
// or on runFrame's frame), the native stack's base, where a failed check
// leaves from, and the hot regions. The hot read region is the context
// already, as its first access would make it, which spares that access
// the region walk; its end is the region's length less slack (see
// hotSlack), so that any access that starts inside passes the inline
// test.
func emitDirectRegions(a *x86.Asm, noStack uintptr, slack int32) {
	a.Lea(tmpAddr, st(directRegion))
	a.Store(8, st(backend.OffRegions), tmpAddr)
	a.StoreImm(8, st(backend.OffNRegions), 1)
	a.Store(8, x86.M(tmpAddr, int32(engine.RegionLoOffset)), regMap[1])
	a.Lea(tmpC, x86.MIndex(regMap[1], x86.RBX, 1, 0))
	a.Store(8, x86.M(tmpAddr, int32(engine.RegionHiOffset)), tmpC)
	a.StoreImm(8, x86.M(tmpAddr, int32(engine.RegionWritableOffset)), 1) // as Run's
	a.MovRI(tmpAddr, uint64(noStack))
	a.Store(8, st(backend.OffStackLo), tmpAddr)
	a.Lea(tmpAddr, x86.M(x86.RSP, -8)) // where the call puts its return address
	a.Store(8, st(backend.OffNativeBase), tmpAddr)
	a.Store(8, st(backend.OffHotReadLo), regMap[1])
	a.ALURR(x86.XOR, 4, tmpC, tmpC)
	a.Lea(tmpAddr, x86.M(x86.RBX, -slack))
	a.ALURI(x86.CMP, 8, x86.RBX, slack)
	a.Cmov(x86.CondAE, 8, tmpC, tmpAddr)
	a.Store(8, st(backend.OffHotReadLo+8), tmpC)
	a.StoreImm(8, st(backend.OffHotWriteLo+8), 0) // no region allowed a write yet
}

// hotSlack returns what the direct entry of checked code takes off the
// context's length for the hot read region's end. The region walk takes
// 7, so that the inline test of an access of any size (up to 8) needs
// only its start; the copy, compare and hoisting code relies on that
// (it adds the 7 back). Code with none of those whose loads are at most
// n bytes needs only n-1: the context's last bytes then pass the inline
// test too (an 8-byte context read as two words would otherwise walk the
// list for the second one on every run). A hot region's end smaller than
// its true one is always sound, so the walk's later 7 is too.
func hotSlack(c *backend.Code, p *vm.Program) int32 {
	if len(c.Copies) != 0 || len(c.Hoists) != 0 {
		return 7
	}
	n := 1
	for _, ins := range p.Instructions() {
		if ins.Class() == asm.ClassLDX {
			n = max(n, frontend.AccessSize(ins.Opcode))
		}
	}
	return int32(n - 1)
}

// callFallback emits the call of d.Fallback(d.FallbackArg, ctx), with the
// context's pointer and length in rbx and rcx and its length as its
// capacity, from the caller's return address: as if the caller had
// called it.
func callFallback(a *x86.Asm, d backend.Direct) {
	a.MovRR(8, x86.RDI, x86.RCX)
	a.MovRI(x86.RAX, uint64(d.FallbackArg))
	a.MovRI(tmpAddr, uint64(d.Fallback))
	a.JmpReg(tmpAddr)
}

// emitDirectFallback emits where resumable code that the entry of
// emitDirectEntry ran continues when it leaves (emitDirectLeave): the
// slice ran out, and the run starts again in d.Fallback, which may, as
// the code stores nothing (it is lean and never names r10). The stack
// pointer is the caller's again, at its return address.
func emitDirectFallback(a *x86.Asm, d backend.Direct) {
	a.Load(8, x86.RBX, st(directCtxPtr))
	a.Load(8, x86.RCX, st(directCtxLen))
	callFallback(a, d)
}

// emitDirectLeave emits the end of the leaves of flat resumable code that
// may get a direct entry (jmpLeave, emitFlatSlice): a return to the
// trampoline that called the code, or when the direct entry entered it
// without a call, a jump to that entry's fallback (Code.DirectLeave),
// since a return would go straight back to Go. The entry put the state
// directState below its stack pointer, where flat code's leaves find it
// again; on any other path the state is a live Go object, which is not
// below the stack pointer.
func (c *compiler) emitDirectLeave() {
	a := c.a
	c.directLeaveOff = a.Len()
	a.Lea(tmpAddr, st(directState))
	a.ALURR(x86.CMP, 8, tmpAddr, x86.RSP)
	a.JccShort(x86.CondNE, 5)
	c.directLeaveJump = a.Jmp() // to the ret below until patched
	a.Ret()
}

// emitRoomEntry emits the entry c's code will get, to measure the room
// it needs before the body.
func (c *compiler) emitRoomEntry(a *x86.Asm) {
	budget, resumable := c.direct.Budget, c.resumable()
	if resumable {
		budget = c.slice
	}
	emitDirectEntry(a, budget, c.direct.MinContext, r1Of(c.LiveIn&(1<<1) != 0, c.direct.MinContext), resumable)
}

// emitDirectEntry emits the entry of code that leaves r6, r8 and r9 alone,
// up to the body, and returns the position of the rel32 of its jump to the
// short-context path (-1 without one). The entry of resumable code
// (whose leaves go through emitDirectLeave) also sets up the state its
// slice's end writes, with the context for the fallback.
func emitDirectEntry(a *x86.Asm, budget int64, minContext int, r1 r1Setup, resumable bool) int {
	short := emitDirectCheck(a, minContext)
	if resumable {
		a.Lea(stateReg, x86.M(x86.RSP, -directState))
		a.Store(8, st(directCtxPtr), x86.RAX)
		a.Store(8, st(directCtxLen), x86.RBX)
	} else {
		// The budget's spill slot is below anything the code pushes.
		a.Lea(stateReg, x86.M(x86.RSP, -directSpill-backend.OffBudget))
	}
	emitDirectArgs(a, budget, r1)
	a.ALURR(x86.XOR, 4, x86.RBX, x86.RBX)
	return short
}

// emitDirectCheck emits the test of the context's length (in rbx) against
// minContext, and returns the position of the rel32 of its jump to the
// short-context path (-1 without one).
func emitDirectCheck(a *x86.Asm, minContext int) int {
	if minContext <= 0 {
		return -1
	}
	a.ALURI(x86.CMP, 8, x86.RBX, int32(minContext))
	return a.Jcc(x86.CondB)
}

// r1Setup is what an entry does to set r1 from the context slice.
type r1Setup uint8

const (
	r1Unread   r1Setup = iota // the code never reads r1 before writing it
	r1NonEmpty                // the context is never empty: its pointer
	r1Slice                   // its pointer, or 0 when it is empty
)

// r1Of returns the r1 setup of an entry that refuses contexts shorter
// than minContext, for code that reads r1 before writing it (read) or not.
func r1Of(read bool, minContext int) r1Setup {
	switch {
	case !read:
		return r1Unread
	case minContext > 0:
		return r1NonEmpty
	}
	return r1Slice
}

// emitDirectArgs sets r1 from the slice's pointer and length (in rax
// and rbx), as r1 says, and the budget. The slice's pointer, length and
// capacity arrive in rax, rbx and rcx; r0 leaves in rax and the error's
// two words in rbx and rcx (the code's exits set rcx to 0, the reason
// of a normal end).
func emitDirectArgs(a *x86.Asm, budget int64, r1 r1Setup) {
	if r1 != r1Unread {
		a.MovRR(8, regMap[1], x86.RAX)
	}
	if r1 == r1Slice {
		a.TestRR(8, x86.RBX, x86.RBX)
		a.Cmov(x86.CondE, 8, regMap[1], x86.RBX) // r1 = 0 for an empty context
	}
	a.MovRI(budgetReg, uint64(budget))
}

// emitShortContext emits the return of a context shorter than the
// program was verified for: r0 = 0 and the error, whose words are
// constants (the Program keeps the error alive, and the Go heap does not
// move).
func emitShortContext(a *x86.Asm, shortErr [2]uintptr) {
	a.ALURR(x86.XOR, 4, x86.RAX, x86.RAX)
	a.MovRI(x86.RBX, uint64(shortErr[0]))
	a.MovRI(x86.RCX, uint64(shortErr[1]))
	a.Ret()
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
