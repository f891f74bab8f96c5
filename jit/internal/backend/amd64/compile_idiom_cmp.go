package amd64

import (
	"math/bits"

	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// Compare loops (frontend.CopyLoop with Compare): the loop's own edge to
// its head goes to the wide code, out of line. There n is the iterations
// the bound and the budget allow and, checked, that the hot read region
// has from both strings on (or the region probe allows for n bytes);
// when n is at least 16 it compares 16 bytes at a time (SSE2, unaligned loads, never past the n bytes: the last
// chunk overlaps the one before) and finds k, the leading positions whose
// elements are equal (and not zero, for a loop that tests it). It charges
// k iterations, grows the counters by k steps and goes to the head's
// ordinary code, which runs iteration k: the one that leaves. Elements of
// 2, 4 or 8 bytes are compared bytewise too (n and the region's share in
// whole elements' bytes, so the overlapping last chunk keeps elements
// aligned for the zero test, pcmpeqw or pcmpeqd); k is the element that
// holds the first byte that leaves. X0-X2 are
// scratch: Go's code around the run keeps nothing in them (X15, its zero,
// is left alone).

// The SSE2 code of the scan: rsi and rdi the two elements' addresses,
// r11d the mask of positions that leave.
var (
	cmpPxor = []byte{0x66, 0x0f, 0xef, 0xd2}                                                 // pxor xmm2, xmm2
	cmpLoad = []byte{0xf3, 0x0f, 0x6f, 0x06, 0xf3, 0x0f, 0x6f, 0x0f, 0x66, 0x0f, 0x74, 0xc8} // movdqu xmm0, [rsi]; movdqu xmm1, [rdi]; pcmpeqb xmm1, xmm0
	cmpZero = []byte{0x66, 0x0f, 0xda, 0xc8, 0x66, 0x0f, 0x74, 0xca}                         // pminub xmm1, xmm0; pcmpeqb xmm1, xmm2
	cmpMask = []byte{0x66, 0x44, 0x0f, 0xd7, 0xd9}                                           // pmovmskb r11d, xmm1
)

// emitCompareLoops emits the wide code of the compare loops, out of line
// after the body: only a loop's own edge to its head goes there (the
// first iteration runs byte by byte, so strings that differ at once pay
// nothing), and it goes on at the head's ordinary code.
func (c *compiler) emitCompareLoops() {
	for i := range c.Copies {
		l := &c.Copies[i]
		switch {
		case l.Find:
			c.idiomBodies[i] = int32(c.a.Len())
			c.emitFindLoop(int(l.Head), l)
		case l.Compare:
			c.idiomBodies[i] = int32(c.a.Len())
			c.emitCompareLoop(int(l.Head), l)
		}
	}
}

// emitCompareLoop emits the wide code of compare loop l, whose head is
// slot pc.
func (c *compiler) emitCompareLoop(pc int, l *frontend.CopyLoop) {
	a := c.a
	c.idiomOuts = c.idiomOuts[:0]
	out := func(cond x86.Cond) { c.idiomOuts = append(c.idiomOuts, int32(a.Jcc(cond))) }
	c.emitIdiomCount(l, out)
	// rcx = the bytes of those iterations' elements.
	shift := uint8(bits.TrailingZeros8(l.Size))
	if shift > 0 {
		a.ShiftRI(x86.SHL, 8, tmpC, shift)
	}
	a.ALURI(x86.CMP, 8, tmpC, 16)
	out(x86.CondB)

	// rsi = the first element's address, rdi = the second's; r1 and r2
	// wait in the state as for a copy.
	a.Store(8, st(backend.OffExitAddr), x86.RDI)
	a.Store(8, st(backend.OffExitSize), x86.RSI)
	c.emitSum(tmpAddr, l.DstBases, int64(l.DstD))
	a.Push(tmpAddr)
	c.emitSum(tmpAddr, l.SrcBases, int64(l.SrcD))
	a.MovRR(8, x86.RSI, tmpAddr)
	a.Pop(x86.RDI)
	probes := len(c.stubs)
	var short int
	if c.checked {
		c.emitCompareRegion(pc, x86.RSI)
		c.emitCompareRegion(pc, x86.RDI)
		// Whole elements only; too few bytes in the region: out after
		// r1 and r2 are back.
		if shift > 0 {
			a.ALURI(x86.AND, 8, tmpC, -int32(l.Size))
		}
		a.ALURI(x86.CMP, 8, tmpC, 16)
		short = a.Jcc(x86.CondB)
	}

	// The scan: 16-byte chunks while rcx, the elements left, has one;
	// then the last 16 of the n elements, which overlap the chunks
	// already found equal (n is at least 16).
	a.Append(cmpPxor)
	loop := a.Len()
	a.Append(cmpLoad)
	switch {
	case l.Zero && shift > 0:
		// The bytes that stay: equal and not in a zero element.
		if l.Size == 2 {
			a.Pcmpeqw(x86.X0, x86.X2)
		} else {
			a.Pcmpeqd(x86.X0, x86.X2)
		}
		a.Pandn(x86.X0, x86.X1)
		a.Pmovmskb(tmpAddr, x86.X0)
		a.ALURI(x86.XOR, 4, tmpAddr, 0xffff)
	case l.Zero:
		a.Append(cmpZero)
		a.Append(cmpMask)
	default:
		a.Append(cmpMask)
		a.ALURI(x86.XOR, 4, tmpAddr, 0xffff)
	}
	c.emitScanStep(loop, true)
	// rcx = k, the elements before rsi (which points into the element
	// that leaves, at its first byte that differs).
	c.emitScanEnd(pc, l, probes, short, shift)
}

// emitScanStep emits the end of a scan's 16-byte step, r11d the mask of
// the positions that leave: on to the next chunk (rsi and, for two
// strings, rdi) while rcx has one, then the last 16 bytes, overlapping
// those already scanned; rsi ends at the first position that leaves, or
// at the n bytes' end.
func (c *compiler) emitScanStep(loop int, two bool) {
	a := c.a
	a.TestRR(4, tmpAddr, tmpAddr)
	found := a.Jcc(x86.CondNE)
	a.ALURI(x86.ADD, 8, x86.RSI, 16)
	if two {
		a.ALURI(x86.ADD, 8, x86.RDI, 16)
	}
	a.ALURI(x86.SUB, 8, tmpC, 16)
	a.ALURI(x86.CMP, 8, tmpC, 16)
	a.JccTo(x86.CondAE, loop)
	a.TestRR(8, tmpC, tmpC)
	done := a.Jcc(x86.CondE)
	a.Lea(x86.RSI, x86.MIndex(x86.RSI, tmpC, 1, -16))
	if two {
		a.Lea(x86.RDI, x86.MIndex(x86.RDI, tmpC, 1, -16))
	}
	a.MovRI32(tmpC, 16)
	a.JmpTo(loop)
	a.PatchRel32(found, a.Len())
	a.Bsf(4, tmpAddr, tmpAddr)
	a.ALURR(x86.ADD, 8, x86.RSI, tmpAddr)
	a.PatchRel32(done, a.Len())
}

// emitScanEnd emits the end of compare or find loop l's wide code, whose
// head is slot pc: k = rcx, the elements of (1<<shift bytes) before rsi,
// charged and advanced by, then back to the head's ordinary code with r2
// (and r1 for a compare loop) restored; and the way out, to the same
// place, for a checked region too short (the jump short) or the region
// probe's failures (the stubs from probes on).
func (c *compiler) emitScanEnd(pc int, l *frontend.CopyLoop, probes, short int, shift uint8) {
	a := c.a
	restore := func() {
		a.Load(8, x86.RSI, st(backend.OffExitSize))
		if !l.Find {
			a.Load(8, x86.RDI, st(backend.OffExitAddr))
		}
	}
	a.MovRR(8, tmpC, x86.RSI)
	restore()
	c.emitSum(tmpAddr, l.SrcBases, int64(l.SrcD))
	a.ALURR(x86.SUB, 8, tmpC, tmpAddr)
	if shift > 0 {
		a.ShiftRI(x86.SHR, 8, tmpC, shift)
	}
	c.idiomOuts = append(c.idiomOuts, int32(a.Jcc(x86.CondE)))
	c.emitIdiomAdvance(l)
	a.JmpTo(int(c.offsets[pc]))
	fail := a.Len()
	if c.checked {
		a.PatchRel32(short, fail)
	}
	for k := probes; k < len(c.stubs); k++ {
		c.stubs[k].n = int32(fail)
	}
	restore()
	a.JmpTo(int(c.offsets[pc]))
	c.idioms++
	for _, p := range c.idiomOuts {
		a.PatchRel32(int(p), int(c.offsets[pc]))
	}
}

// emitIdiomAdvance emits the end of a wide run of k = rcx iterations of
// loop l: charge them, grow the counters by k steps.
func (c *compiler) emitIdiomAdvance(l *frontend.CopyLoop) {
	a := c.a
	a.ImulRRI(8, tmpAddr, tmpC, l.Cost)
	a.ALURR(x86.SUB, 8, budgetReg, tmpAddr)
	for r := range 11 {
		s := l.Steps[r]
		if l.IVs&(1<<r) == 0 || s == 0 {
			continue
		}
		if s == 1 {
			a.ALURR(x86.ADD, 8, regMap[r], tmpC)
			continue
		}
		a.ImulRRI(8, tmpAddr, tmpC, s)
		a.ALURR(x86.ADD, 8, regMap[r], tmpAddr)
	}
}

// emitCompareRegion emits the checked test of the rcx bytes at base: if
// base lies in the hot read region, rcx becomes at most what that region
// has from base on (the scan stays within it; the ordinary loop faults
// where the interpreter does); else the region probe must allow all rcx
// bytes, and its failure goes to the stub's n (set by the caller). The
// caller tests that rcx is still at least 16.
func (c *compiler) emitCompareRegion(pc int, base x86.Reg) {
	a := c.a
	hot := int32(backend.OffHotReadLo)
	first := len(c.stubs)
	a.MovRR(8, tmpAddr, base)
	a.ALURM(x86.SUB, 8, tmpAddr, st(hot))
	a.ALURM(x86.CMP, 8, tmpAddr, st(hot+8))
	c.toStub(x86.CondAE, stubIdiomProbe, pc)
	// r11 = the region's size - (base - its start): its end slot holds
	// the size minus 7.
	a.Unary(x86.NEG, 8, tmpAddr)
	a.ALURM(x86.ADD, 8, tmpAddr, st(hot+8))
	a.ALURI(x86.ADD, 8, tmpAddr, 7)
	a.ALURR(x86.CMP, 8, tmpC, tmpAddr)
	a.JccShort(x86.CondBE, 0)
	skip := a.Len()
	a.MovRR(8, tmpC, tmpAddr)
	a.Bytes()[skip-1] = byte(a.Len() - skip)
	for k := first; k < len(c.stubs); k++ {
		s := &c.stubs[k]
		s.write, s.base, s.resume = false, base, int32(a.Len())
	}
}

// emitIdiomRegion emits the checked test that the rcx bytes at base lie
// in a region that allows reads (write false) or writes: both its first
// and last 8-byte windows in the hot region, else the region probe, whose
// failure goes to the stub's n (set by the caller).
func (c *compiler) emitIdiomRegion(pc int, base x86.Reg, write bool) {
	a := c.a
	hot := int32(backend.OffHotReadLo)
	if write {
		hot = backend.OffHotWriteLo
	}
	first := len(c.stubs)
	a.MovRR(8, tmpAddr, base)
	a.ALURM(x86.SUB, 8, tmpAddr, st(hot))
	a.ALURM(x86.CMP, 8, tmpAddr, st(hot+8))
	c.toStub(x86.CondAE, stubIdiomProbe, pc)
	a.Lea(tmpAddr, x86.MIndex(tmpAddr, tmpC, 1, -8))
	a.ALURM(x86.CMP, 8, tmpAddr, st(hot+8))
	c.toStub(x86.CondAE, stubIdiomProbe, pc)
	for k := first; k < len(c.stubs); k++ {
		s := &c.stubs[k]
		s.write, s.base, s.resume = write, base, int32(a.Len())
	}
}

// compareEdge reports whether the jump being emitted, to slot target,
// closes a compare loop's cycle: it goes to the ordinary code.
func (c *compiler) compareEdge(target int) bool {
	i := c.IdiomAt(target)
	return i >= 0 && c.Copies[i].Compare && int(c.Copies[i].End) == c.pc
}
