package amd64

import (
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// Find loops (frontend.CopyLoop with Find): strlen, memchr and "find c or
// the end" loops, out of line like compare loops (compile_idiom_cmp.go).
// n is the iterations the bound and the budget allow and, checked, that
// the hot read region has from the first element on (or the region probe
// allows for n bytes); when n is at least 16 the scan compares 16 bytes
// at a time with the needles, broadcast into X2 and X3 (SSE2, unaligned
// loads that never pass the n bytes: the last chunk overlaps the one
// before), and finds k, the first position equal to a needle, or n. It
// charges k iterations, grows the counters by k steps and goes to the
// head's ordinary code, which runs iteration k: the one that leaves, or
// at n the one that runs out of budget or faults where the interpreter
// does. A needle in a register from 256 on (in the compared width)
// matches no byte: the loop then runs byte by byte.

// emitFindLoop emits the wide code of find loop l, whose head is slot pc.
func (c *compiler) emitFindLoop(pc int, l *frontend.CopyLoop) {
	a := c.a
	c.idiomOuts = c.idiomOuts[:0]
	out := func(cond x86.Cond) { c.idiomOuts = append(c.idiomOuts, int32(a.Jcc(cond))) }
	c.emitIdiomCount(l, out)
	a.ALURI(x86.CMP, 8, tmpC, 16)
	out(x86.CondB)
	// The needles, each byte of X2 (X3) the first (second) needle, read
	// before rsi (r2, which may be one) changes.
	for i, nd := range l.Needle[:l.Needles] {
		x := x86.X2 + x86.XReg(i)
		if nd.Reg < 0 {
			a.MovRI32(tmpAddr, uint32(nd.Imm)*0x01010101)
		} else {
			r, size := regMap[nd.Reg], 4
			if nd.Wide {
				size = 8
			}
			a.ALURI(x86.CMP, size, r, 0xff)
			out(x86.CondA)
			a.ImulRRI(4, tmpAddr, r, 0x01010101)
		}
		a.MovdToX(x, tmpAddr)
		a.Pshufd(x, x, 0)
	}

	// rsi = the first element's address; r2 waits in the state.
	a.Store(8, st(backend.OffExitSize), x86.RSI)
	c.emitSum(tmpAddr, l.SrcBases, int64(l.SrcD))
	a.MovRR(8, x86.RSI, tmpAddr)
	probes := len(c.stubs)
	var short int
	if c.checked {
		c.emitCompareRegion(pc, x86.RSI)
		a.ALURI(x86.CMP, 8, tmpC, 16)
		short = a.Jcc(x86.CondB)
	}

	// The scan: 16-byte chunks while rcx, the elements left, has one;
	// then the last 16 of the n elements, which overlap the chunks
	// already scanned (n is at least 16).
	loop := a.Len()
	a.Movdqu(x86.X0, x86.M(x86.RSI, 0))
	if l.Needles == 2 {
		a.Movdqa(x86.X1, x86.X0)
		a.Pcmpeqb(x86.X1, x86.X3)
	}
	a.Pcmpeqb(x86.X0, x86.X2)
	if l.Needles == 2 {
		a.Por(x86.X0, x86.X1)
	}
	a.Pmovmskb(tmpAddr, x86.X0)
	c.emitScanStep(loop, false)
	// rcx = k, the elements before rsi.
	c.emitScanEnd(pc, l, probes, short, 0)
}
