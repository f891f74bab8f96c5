package amd64

import (
	"math/bits"

	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// Copy and fill loops (frontend.CopyLoop): at the loop's head, before its
// ordinary code, a wide copy (rep movsb) or fill (rep stos of the
// element's size) runs k whole iterations at once: k is the iterations
// that stay in the loop, at most what the budget pays for. It charges k
// times the iteration's cost, grows the counters by k steps and falls
// into the ordinary loop, which runs the rest: at least the last
// iteration, which recomputes the temporaries and leaves. Overlapping
// spans, spans a region does not allow (checked code), a budget that pays
// for nothing and copies under idiomMinBytes take the ordinary loop
// unchanged.
//
// The slot's offset is the wide code's, so that jumps from outside and a
// slice that ends in the loop (which resumes at its head) come back to it;
// the loop's own back edge goes to the ordinary code (idiomBodies).
//
// rep movsb: with ERMSB it moves a MiB at the speed of native memcpy.
// Its start costs ~10 ns: measured (BenchmarkCopyIdiom), a 16-byte copy
// is slower wide than byte by byte and a 32-byte copy faster, so shorter
// spans take the ordinary loop.
var idiomMinBytes int32 = 32

// repStos holds rep stosb, stosw, stosd and stosq.
var repStos = [4][]byte{{0xf3, 0xaa}, {0x66, 0xf3, 0xab}, {0xf3, 0xab}, {0xf3, 0x48, 0xab}}

// emitIdiom emits the wide code of the copy loop at slot pc, if any, and
// reports whether it did; it falls into the code after it.
func (c *compiler) emitIdiom(pc int) bool {
	i := c.IdiomAt(pc)
	if i < 0 || c.copying != nil || c.trap {
		// Options.trapSlowPaths traps the checked copy of a loop with
		// hoisted checks, where a wide copy leaves its last iteration.
		return false
	}
	l := &c.Copies[i]
	if l.Compare {
		return false // out of line: emitCompareLoops
	}
	a := c.a
	c.idiomStart = int32(a.Len())
	c.idiomOuts = c.idiomOuts[:0]
	out := func(cond x86.Cond) { c.idiomOuts = append(c.idiomOuts, int32(a.Jcc(cond))) }
	log2Size := uint8(bits.TrailingZeros8(l.Size))

	c.emitIdiomCount(l, out)
	if log2Size > 0 {
		a.ShiftRI(x86.SHL, 8, tmpC, log2Size)
	}
	a.ALURI(x86.CMP, 8, tmpC, idiomMinBytes)
	out(x86.CondB)

	// rdi = the destination, rsi = the source. r1 and r2 wait in the
	// state's exit address and size, which only an exit writes (none
	// can happen before they are restored): the native stack has room
	// for no more than a checked access's slow path (nativeStackBytes),
	// which the region probe below uses up.
	// A fill's value goes in rax (r0) instead of the source in rsi.
	other := x86.RSI
	if l.Fill {
		other = x86.RAX
	}
	a.Store(8, st(backend.OffExitAddr), x86.RDI)
	a.Store(8, st(backend.OffExitSize), other)
	var outPop []int32
	if l.Fill {
		c.emitSum(tmpAddr, l.DstBases, int64(l.DstD))
		if l.Value >= 0 {
			a.MovRR(8, x86.RAX, regMap[l.Value])
		} else {
			a.MovRISX(x86.RAX, l.Imm)
		}
		a.MovRR(8, x86.RDI, tmpAddr)
	} else {
		c.emitSum(tmpAddr, l.DstBases, int64(l.DstD))
		a.Push(tmpAddr)
		c.emitSum(tmpAddr, l.SrcBases, int64(l.SrcD))
		a.MovRR(8, x86.RSI, tmpAddr)
		a.Pop(x86.RDI)
		// A forward copy into its own source replicates bytes: the
		// spans must not overlap.
		for _, p := range [2][2]x86.Reg{{x86.RDI, x86.RSI}, {x86.RSI, x86.RDI}} {
			a.MovRR(8, tmpAddr, p[0])
			a.ALURR(x86.SUB, 8, tmpAddr, p[1])
			a.ALURR(x86.CMP, 8, tmpAddr, tmpC)
			outPop = append(outPop, int32(a.Jcc(x86.CondB)))
		}
	}
	probes := len(c.stubs)
	if c.checked {
		for _, w := range [2]bool{false, true} {
			if !w && l.Fill {
				continue // nothing read
			}
			base := x86.RSI
			if w {
				base = x86.RDI
			}
			c.emitIdiomRegion(pc, base, w)
		}
	}
	// Charge k iterations, copy, grow the counters by k steps.
	a.MovRR(8, tmpAddr, tmpC)
	if log2Size > 0 {
		a.ShiftRI(x86.SHR, 8, tmpAddr, log2Size)
	}
	a.ImulRRI(8, tmpAddr, tmpAddr, l.Cost)
	a.ALURR(x86.SUB, 8, budgetReg, tmpAddr)
	a.MovRR(8, tmpAddr, tmpC)
	if l.Fill {
		// rep stos of the element's size, rcx elements: the
		// encoder has no stos, and nothing else uses it.
		if log2Size > 0 {
			a.ShiftRI(x86.SHR, 8, tmpC, log2Size)
		}
		a.Append(repStos[log2Size])
	} else {
		a.RepMovsb()
	}
	a.Load(8, other, st(backend.OffExitSize))
	a.Load(8, x86.RDI, st(backend.OffExitAddr))
	for r := range 11 {
		s := l.Steps[r]
		if l.IVs&(1<<r) == 0 || s == 0 {
			continue
		}
		if s == int32(l.Size) {
			a.ALURR(x86.ADD, 8, regMap[r], tmpAddr)
			continue
		}
		a.MovRR(8, tmpC, tmpAddr)
		if log2Size > 0 {
			a.ShiftRI(x86.SHR, 8, tmpC, log2Size)
		}
		a.ImulRRI(8, tmpC, tmpC, s)
		a.ALURR(x86.ADD, 8, regMap[r], tmpC)
	}
	c.idiomOuts = append(c.idiomOuts, int32(a.Jmp()))
	// The failures after r1 and r2 were set aside.
	fail := a.Len()
	for _, p := range outPop {
		a.PatchRel32(int(p), fail)
	}
	for k := probes; k < len(c.stubs); k++ {
		c.stubs[k].n = int32(fail)
	}
	a.Load(8, other, st(backend.OffExitSize))
	a.Load(8, x86.RDI, st(backend.OffExitAddr))
	c.idioms++
	// The failures and the end go to what follows: the hoisted checks'
	// guard, or the ordinary code.
	for _, p := range c.idiomOuts {
		a.PatchRel32(int(p), a.Len())
	}
	return true
}

// emitIdiomCount emits rcx = the iterations of loop l that stay, at most
// what the budget pays for; out jumps to the ordinary code.
func (c *compiler) emitIdiomCount(l *frontend.CopyLoop, out func(x86.Cond)) {
	a := c.a
	step := l.Steps[l.Counter]
	// r11 = the iterations that stay: the counter's first compared value
	// must be below the bound (and for "!=" reach it in whole steps).
	a.Lea(tmpC, x86.M(regMap[l.Counter], l.DE))
	a.ALURI(x86.CMP, 8, tmpC, l.Bound)
	out(x86.CondAE)
	a.MovRI32(tmpAddr, uint32(l.Bound))
	a.ALURR(x86.SUB, 8, tmpAddr, tmpC)
	if l.Divisible {
		a.TestRI(4, tmpAddr, step-1)
		out(x86.CondNE)
	}
	if step > 1 {
		a.ALURI(x86.ADD, 8, tmpAddr, step-1)
		a.ShiftRI(x86.SHR, 8, tmpAddr, uint8(bits.TrailingZeros32(uint32(step))))
	}
	// rcx = the iterations the budget pays for: min(budget, 2^31-1) *
	// floor(2^32/cost) >> 32, at most budget/cost.
	a.TestRR(8, budgetReg, budgetReg)
	out(x86.CondS)
	a.MovRR(8, tmpC, budgetReg)
	a.ALURI(x86.CMP, 8, tmpC, 0x7fffffff)
	a.JccShort(x86.CondBE, 0)
	skip := a.Len()
	a.MovRI32(tmpC, 0x7fffffff)
	a.Bytes()[skip-1] = byte(a.Len() - skip)
	a.ImulRRI(8, tmpC, tmpC, int32((1<<32)/int64(l.Cost)))
	a.ShiftRI(x86.SHR, 8, tmpC, 32)
	// rcx = k = min(both), in bytes.
	a.ALURR(x86.CMP, 8, tmpC, tmpAddr)
	a.JccShort(x86.CondBE, 0)
	skip = a.Len()
	a.MovRR(8, tmpC, tmpAddr)
	a.Bytes()[skip-1] = byte(a.Len() - skip)
}

// bodyOffset returns the offset of slot pc's ordinary code: for the head
// of a copy loop, where the wide code falls into.
func (c *compiler) bodyOffset(pc int) int {
	if len(c.idiomBodies) > 0 {
		if i := c.IdiomAt(pc); i >= 0 && c.idiomBodies[i] != 0 && !c.Copies[i].Compare {
			return int(c.idiomBodies[i])
		}
	}
	return int(c.offsets[pc])
}

// idiomTarget returns where a jump to slot target, already emitted, goes
// when that is the head of a copy loop: the back edge, to its ordinary
// code (ok false: not such a jump).
func (c *compiler) idiomTarget(target int, emitted bool) (int32, bool) {
	if !emitted || c.copying != nil || len(c.idiomBodies) == 0 {
		return 0, false
	}
	if i := c.IdiomAt(target); i >= 0 && c.idiomBodies[i] != 0 && !c.Copies[i].Compare {
		return c.idiomBodies[i], true
	}
	return 0, false
}

// emitIdiomProbe emits a copy's slow path of the region test: ask the
// stack and the region list whether they allow the span at s.base of
// rcx bytes; go on with the copy if so, else to s.n, which takes the
// ordinary loop. Its native stack, 40 bytes with the probe's, is a
// checked access's slow path's (see nativeStackBytes in package jit).
func (c *compiler) emitIdiomProbe(s *stub) {
	a := c.a
	a.Push(budgetReg)
	a.Push(tmpC)
	a.MovRR(8, tmpD, tmpC)
	a.MovRR(8, tmpAddr, s.base)
	var w uint32
	if s.write {
		w = 1
	}
	a.MovRI32(tmpC, w)
	a.PatchRel32(a.Call(), c.regionProbeOff)
	a.TestRR(4, tmpC, tmpC)
	a.Pop(tmpC)
	a.Pop(budgetReg)
	a.JccTo(x86.CondNE, int(s.n))
	a.JmpTo(int(s.resume))
}

// SetIdiomMinBytes sets the shortest copy that runs wide, for tests and
// benchmarks, and returns a function that restores it.
func SetIdiomMinBytes(n int32) (restore func()) {
	old := idiomMinBytes
	idiomMinBytes = n
	return func() { idiomMinBytes = old }
}
