package jit_test

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// fuzzCtxSize is the context size of generated programs.
const fuzzCtxSize = 64

// byteSource hands out fuzz bytes, then zeros.
type byteSource struct {
	b []byte
}

func (s *byteSource) u8() uint8 {
	if len(s.b) == 0 {
		return 0
	}
	v := s.b[0]
	s.b = s.b[1:]
	return v
}

func (s *byteSource) u32() uint32 {
	return uint32(s.u8()) | uint32(s.u8())<<8 | uint32(s.u8())<<16 | uint32(s.u8())<<24
}

func (s *byteSource) n(n int) int { return int(s.u8()) % n }

// progGen builds programs that are valid by construction from fuzz bytes:
// every register is initialised, jumps go forward or form counted loops,
// memory accesses hit the stack or the context (or, when faults are
// allowed, just miss them), and local calls go to functions at the end.
//
// Register roles: r0..r7 are free for random operations, r8 counts loop
// iterations, r9 holds the context pointer, r10 is the frame pointer.
type progGen struct {
	src         *byteSource
	insns       []asm.Instruction
	allowFaults bool // may emit out-of-bounds and misaligned accesses
	fixups      []fixup
	funcs       int // number of local functions to emit at the end
	calls       []int
	depth       int  // nesting of the block being generated
	inFunc      bool // generating a local function (r10 is at least one frame down)
}

// fixup is a forward jump whose target is patched when a block ends.
type fixup struct {
	at, target int
}

func genProgram(data []byte) (insns []asm.Instruction, allowFaults bool) {
	g := &progGen{src: &byteSource{b: data}}
	g.allowFaults = g.src.u8()&3 == 0
	g.funcs = g.src.n(3)
	// Initialise every register.
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 9, Src: 1})
	for r := uint8(0); r <= 8; r++ {
		if r == 1 || r == 2 {
			continue // keep the context pointer and length around for a while
		}
		g.lddw(r, uint64(g.src.u32())|uint64(g.src.u32())<<32)
	}
	g.block(24 + g.src.n(40))
	g.emit(asm.Instruction{Opcode: asm.OpExit})
	starts := make([]int, g.funcs)
	for f := range starts {
		starts[f] = len(g.insns)
		g.depth, g.inFunc = 1, true
		g.block(4 + g.src.n(12))
		g.emit(asm.Instruction{Opcode: asm.OpExit})
	}
	// Calls were emitted with the function's number; point them at it.
	for _, c := range g.calls {
		g.insns[c].Imm = int32(starts[g.insns[c].Imm] - c - 1)
	}
	return g.insns, g.allowFaults
}

func (g *progGen) emit(ins ...asm.Instruction) { g.insns = append(g.insns, ins...) }

func (g *progGen) lddw(dst uint8, v uint64) {
	pair := asm.LDDW(dst, v)
	g.insns = append(g.insns, pair[0], pair[1])
}

// freeReg returns a register random operations may write.
func (g *progGen) freeReg() uint8 { return uint8(g.src.n(8)) }

// anyReg returns a register random operations may read.
func (g *progGen) anyReg() uint8 { return uint8(g.src.n(10)) }

// block emits about n instructions of random operations.
func (g *progGen) block(n int) {
	for i := 0; i < n && len(g.src.b) > 0; i++ {
		switch k := g.src.n(16); {
		case k < 6:
			g.alu()
		case k < 9:
			g.memory()
		case k < 10:
			g.atomic()
		case k < 12:
			g.forwardJump()
		case k == 12 && g.depth == 0:
			switch g.src.n(5) {
			case 0:
				g.loop()
			case 1:
				g.walk()
			case 2:
				g.compareLoop()
			case 3:
				g.findLoop()
			default:
				g.copyLoop()
			}
		case k == 13:
			g.call()
		case k == 14:
			g.packetLoad()
		case g.src.u8()&7 == 0:
			g.switchTree()
		default:
			g.lddw(g.freeReg(), uint64(int64(int32(g.src.u32()))))
		}
	}
}

// switchTree emits a compare tree on one register as clang lowers a
// switch (see switchSource), with leaves that are small blocks jumping to
// its end: the JIT compiles such trees to jump tables. Usually the
// register is first narrowed to a range around the cases.
func (g *progGen) switchTree() {
	class := uint8(asm.ClassJMP)
	if g.src.u8()&1 == 0 {
		class = asm.ClassJMP32
	}
	n, step, base := 4+g.src.n(14), 1+g.src.n(3), int32(int8(g.src.u8()))
	reg := g.anyReg()
	if g.src.u8()&3 != 0 {
		reg = g.freeReg()
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluAND, Dst: reg, Imm: 31},
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: reg, Imm: base - 2})
	}
	split := []uint8{asm.JmpJSGT, asm.JmpJGT, asm.JmpJSGE, jumpCodes[g.src.n(len(jumpCodes))]}[g.src.n(4)]
	// jumps are the tree's jumps to leaf (n: the default, n+1: the end).
	type jump struct{ at, leaf int }
	var jumps []jump
	var tree func(lo, hi int)
	tree = func(lo, hi int) {
		if hi-lo <= 2 {
			for i := lo; i < hi; i++ {
				jumps = append(jumps, jump{len(g.insns), i})
				g.emit(asm.Instruction{Opcode: class | asm.JmpJEQ, Dst: reg, Imm: base + int32(i*step)})
			}
			jumps = append(jumps, jump{len(g.insns), n})
			g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
			return
		}
		mid := (lo + hi) / 2
		at := len(g.insns)
		g.emit(asm.Instruction{Opcode: class | split, Dst: reg, Imm: base + int32((mid-1)*step)})
		tree(lo, mid)
		g.insns[at].Offset = int16(len(g.insns) - at - 1)
		tree(mid, hi)
	}
	tree(0, n)
	leaves := make([]int, n+2)
	g.depth++
	for i := range n + 1 {
		leaves[i] = len(g.insns)
		g.block(1 + g.src.n(3))
		jumps = append(jumps, jump{len(g.insns), n + 1})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
	}
	g.depth--
	leaves[n+1] = len(g.insns)
	for _, j := range jumps {
		g.insns[j.at].Offset = int16(leaves[j.leaf] - j.at - 1)
	}
}

var aluCodes = []uint8{asm.AluADD, asm.AluSUB, asm.AluMUL, asm.AluDIV, asm.AluOR, asm.AluAND,
	asm.AluLSH, asm.AluRSH, asm.AluNEG, asm.AluMOD, asm.AluXOR, asm.AluMOV, asm.AluARSH, asm.AluEND}

func (g *progGen) alu() {
	class := uint8(asm.ClassALU64)
	if g.src.u8()&1 == 0 {
		class = asm.ClassALU
	}
	op := aluCodes[g.src.n(len(aluCodes))]
	ins := asm.Instruction{Opcode: class | op, Dst: g.freeReg()}
	switch op {
	case asm.AluNEG:
	case asm.AluEND:
		ins.Imm = []int32{16, 32, 64}[g.src.n(3)]
		if g.src.u8()&1 == 0 {
			ins.Opcode |= asm.SourceX // to big endian (or bswap in ALU64)
		}
		if class == asm.ClassALU64 {
			ins.Opcode &^= asm.SourceX
		}
	default:
		if g.src.u8()&1 == 0 {
			ins.Opcode |= asm.SourceX
			ins.Src = g.anyReg()
		} else {
			ins.Imm = int32(g.src.u32())
			if g.src.u8()&1 == 0 {
				ins.Imm = int32(int8(ins.Imm)) // small values hit more edge cases
			}
		}
		switch {
		case (op == asm.AluDIV || op == asm.AluMOD) && g.src.u8()&1 == 0:
			ins.Offset = 1 // sdiv, smod
		case op == asm.AluMOV && ins.Opcode&asm.SourceX != 0 && g.src.u8()&3 == 0:
			sizes := []int16{8, 16, 32}
			if class == asm.ClassALU {
				sizes = sizes[:2]
			}
			ins.Offset = sizes[g.src.n(len(sizes))] // movsx
		}
	}
	g.emit(ins)
}

var sizeCodes = []uint8{asm.SizeB, asm.SizeH, asm.SizeW, asm.SizeDW}

// address picks a base register and offset for an access of size bytes.
func (g *progGen) address(size int, aligned bool) (uint8, int16) {
	var base uint8
	var off int
	if g.src.u8()&1 == 0 {
		base = 10
		off = -1 - g.src.n(vm.StackFrameSize)
		off -= size - 1
		if g.inFunc && g.src.u8()&7 == 0 {
			off += vm.StackFrameSize // the caller's frame
		}
	} else {
		base = 9
		off = g.src.n(fuzzCtxSize - size + 1)
	}
	if aligned {
		off &^= size - 1
	}
	if g.allowFaults && g.src.u8()&15 == 0 {
		off += []int{-size, fuzzCtxSize, 1, 600, -4096}[g.src.n(5)]
	}
	return base, int16(off)
}

func (g *progGen) memory() {
	size := g.src.n(4)
	nbytes := 1 << (3 - size)
	sz := sizeCodes[3-size]
	base, off := g.address(nbytes, false)
	if base == 9 && off >= 0 && g.src.u8()&3 == 0 {
		// Through a copy of the context pointer moved by two adds: the
		// first pairs with the move (one lea), the second may fold into
		// the access when nothing reads the copy afterwards.
		t, split := g.freeReg(), int16(g.src.n(int(off)+1))
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: t, Src: 9},
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: t, Imm: 1},
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: t, Imm: int32(split) - 1})
		base, off = t, off-split
	}
	switch g.src.n(4) {
	case 0: // load
		mode := uint8(asm.ModeMEM)
		if sz != asm.SizeDW && g.src.u8()&1 == 0 {
			mode = asm.ModeMEMSX
		}
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | mode | sz, Dst: g.freeReg(), Src: base, Offset: off})
	case 1: // store immediate
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sz, Dst: base, Offset: off, Imm: int32(g.src.u32())})
	default: // store register
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: base, Src: g.anyReg(), Offset: off})
	}
}

var atomicCodes = []int32{asm.AtomicADD, asm.AtomicOR, asm.AtomicAND, asm.AtomicXOR,
	asm.AtomicADD | asm.AtomicFetch, asm.AtomicOR | asm.AtomicFetch, asm.AtomicAND | asm.AtomicFetch,
	asm.AtomicXOR | asm.AtomicFetch, asm.AtomicXCHG, asm.AtomicCMPXCHG}

func (g *progGen) atomic() {
	sz, n := uint8(asm.SizeW), 4
	if g.src.u8()&1 == 0 {
		sz, n = asm.SizeDW, 8
	}
	base, off := g.address(n, !(g.allowFaults && g.src.u8()&7 == 0))
	src := g.freeReg() // fetch variants write src
	g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeATOMIC | sz, Dst: base, Src: src, Offset: off,
		Imm: atomicCodes[g.src.n(len(atomicCodes))]})
}

var jumpCodes = []uint8{asm.JmpJEQ, asm.JmpJGT, asm.JmpJGE, asm.JmpJSET, asm.JmpJNE, asm.JmpJSGT,
	asm.JmpJSGE, asm.JmpJLT, asm.JmpJLE, asm.JmpJSLT, asm.JmpJSLE}

func (g *progGen) condition() asm.Instruction {
	class := uint8(asm.ClassJMP)
	if g.src.u8()&1 == 0 {
		class = asm.ClassJMP32
	}
	ins := asm.Instruction{Opcode: class | jumpCodes[g.src.n(len(jumpCodes))], Dst: g.anyReg()}
	if g.src.u8()&1 == 0 {
		ins.Opcode |= asm.SourceX
		ins.Src = g.anyReg()
	} else {
		ins.Imm = int32(int8(g.src.u8()))
	}
	return ins
}

// forwardJump emits an if: a conditional (or unconditional) jump over a
// nested block.
func (g *progGen) forwardJump() {
	at := len(g.insns)
	// One byte picks the kind of jump (its spare bits a select), so
	// that selects leave the rest of the generated programs as they were.
	k := g.src.u8()
	if k&7 == 0 {
		op := uint8(asm.ClassJMP | asm.JmpJA)
		if g.src.u8()&1 == 0 {
			op = asm.ClassJMP32 | asm.JmpJA // gotol
		}
		g.emit(asm.Instruction{Opcode: op})
	} else {
		if k&0x18 == 0 {
			g.selectShape()
			return
		}
		g.emit(g.condition())
	}
	g.depth++
	g.block(1 + g.src.n(6))
	g.depth--
	delta := len(g.insns) - at - 1
	if g.insns[at].Opcode == asm.ClassJMP32|asm.JmpJA {
		g.insns[at].Imm = int32(delta)
	} else {
		g.insns[at].Offset = int16(delta)
	}
}

// selectShape emits a branch that only picks a value, which the amd64
// JIT runs as a cmov (frontend.Select): "if cond goto +1; mov x, B" or
// "if cond goto join; mov x, B; goto join" with dead code before the
// join. A triangle may pick 0 or 1, "mov x, 1; if cond goto +1;
// mov x, 0" (or the other way round), which it runs as a setcc.
func (g *progGen) selectShape() {
	j, m := g.condition(), g.selectMov()
	if k := g.src.u8(); k&1 == 0 {
		j.Offset = 1
		if k&6 == 0 {
			k1 := int32(k >> 3 & 1)
			before := asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceK, Dst: m.Dst, Imm: k1}
			if k&0x10 == 0 {
				before.Opcode = asm.ClassALU | asm.AluMOV | asm.SourceK
			}
			m.Opcode &^= asm.SourceX
			m.Src, m.Imm = 0, 1-k1
			g.emit(before)
		}
		g.emit(j, m)
		return
	}
	dead := int16(g.src.n(3))
	j.Offset = 2 + dead
	g.emit(j, m, asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: dead})
	for range dead {
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 0, Imm: 77})
	}
}

// selectMov returns a mov of a select: 32 or 64 bits, of an immediate or
// a register.
func (g *progGen) selectMov() asm.Instruction {
	ops := [...]uint8{asm.ClassALU64 | asm.AluMOV | asm.SourceK, asm.ClassALU | asm.AluMOV | asm.SourceK,
		asm.ClassALU64 | asm.AluMOV | asm.SourceX, asm.ClassALU | asm.AluMOV | asm.SourceX}
	m := asm.Instruction{Opcode: ops[g.src.n(4)], Dst: g.freeReg(), Src: g.anyReg()}
	if m.Opcode&asm.SourceX == 0 {
		m.Src, m.Imm = 0, int32(g.src.u32())
	}
	return m
}

// loop emits a counted loop: r8 = n; body; r8 -= 1; if r8 != 0 goto body.
func (g *progGen) loop() {
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 8, Imm: int32(1 + g.src.n(20))})
	start := len(g.insns)
	g.depth++
	g.block(1 + g.src.n(8))
	g.depth--
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluSUB, Dst: 8, Imm: 1})
	back := start - len(g.insns) - 1
	switch k := g.src.u8(); {
	case k&1 == 0:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 8, Offset: int16(back)})
	case k&6 == 0:
		// log2_int's back edge, a select (frontend.Select): leave when
		// r8 is 0, else "if cond goto body; mov x, B; goto body".
		j := g.condition()
		j.Offset = int16(back - 1)
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 8, Offset: 3}, j, g.selectMov(),
			asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(back - 3)})
	default:
		// jeq to the exit of the loop, then a backward ja.
		g.emit(asm.Instruction{Opcode: asm.ClassJMP32 | asm.JmpJEQ, Dst: 8, Offset: 1})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(back - 1)})
	}
}

// walk emits a loop that walks the context with a counter in r8, as
// clang compiles "for (i = a; i < b; i += k) p[i] = ...", with the exit
// test at the top, at the bottom, at the bottom jumping out, or at the
// top of a loop entered by a jump to its body: the
// checked JIT hoists the checks of such loops (compile_hoist.go). The
// walk stays inside the context unless faults are allowed.
func (g *progGen) walk() {
	step := []int32{1, 1, 2, 4, 8, 3}[g.src.n(6)]
	size := 1 << g.src.n(4)
	start := int32(g.src.n(16))
	count := int32(1 + g.src.n(int(fuzzCtxSize-int32(size)-start)/int(step)))
	end := start + step*count // the counter's first value that leaves
	off := int16(g.src.n(int(fuzzCtxSize - int32(size) - (end - step))))
	if g.allowFaults && g.src.u8()&3 == 0 {
		off += int16(g.src.n(8)) - 3
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 8, Imm: start})
	form := g.src.n(4)
	// The comparison that leaves the loop, at the top (forms 0 and 3) or
	// the bottom (form 2), with r8 below end on the iterations that stay.
	leave := []asm.Instruction{
		{Opcode: asm.ClassJMP | asm.JmpJGE, Dst: 8, Imm: end},
		{Opcode: asm.ClassJMP | asm.JmpJGT, Dst: 8, Imm: end - 1},
		{Opcode: asm.ClassJMP | asm.JmpJSGE, Dst: 8, Imm: end},
		{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 8, Imm: end}, // exact: end is start + step*count
	}[g.src.n(4)]
	add := asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 8, Imm: step}
	entry := len(g.insns)
	if form == 3 {
		// Rotated, as clang lays out while loops: jump to the body, with
		// the step and the test at the head.
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 2})
	}
	head := len(g.insns)
	switch form {
	case 0:
		g.emit(leave)
	case 3:
		g.emit(add, leave)
	}
	// The walk goes over the context (r9) or over the 64 bytes below r10.
	base, baseOff := uint8(9), int16(0)
	if g.src.u8()&3 == 0 {
		base, baseOff = 10, -fuzzCtxSize
	}
	g.depth++
	for range 1 + g.src.n(3) {
		t := g.freeReg()
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: t, Src: base},
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: t, Src: 8})
		sz := sizeCodes[bits.TrailingZeros(uint(size))]
		if g.src.u8()&1 == 0 {
			g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sz, Dst: g.freeReg(), Src: t, Offset: off + baseOff})
		} else {
			g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: t, Src: g.anyReg(), Offset: off + baseOff})
		}
		g.block(g.src.n(3))
	}
	g.depth--
	back := func(extra int) int16 { return int16(head - len(g.insns) - 1 - extra) }
	switch form {
	case 0:
		if g.src.u8()&3 != 0 {
			g.emit(add, asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: back(1)})
			g.insns[head].Offset = int16(len(g.insns) - head - 1)
			break
		}
		// The test leaves to a tail between it and the jump back, which
		// reads or writes at the counter's last value.
		at := g.src.n(fuzzCtxSize) // where in the context
		if g.allowFaults && g.src.u8()&1 == 0 {
			at = fuzzCtxSize + g.src.n(4)
		}
		tailOff := int16(at) - int16(end)
		t := g.freeReg()
		g.emit(add, asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 4})
		g.insns[head].Offset = int16(len(g.insns) - head - 1)
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: t, Src: base},
			asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: t, Src: 8},
			asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeB, Dst: t, Src: g.anyReg(), Offset: tailOff + baseOff},
			asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: 1})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: back(0)})
	case 1: // stay at the bottom
		stay := []asm.Instruction{
			{Opcode: asm.ClassJMP | asm.JmpJLT, Dst: 8, Imm: end},
			{Opcode: asm.ClassJMP | asm.JmpJLE, Dst: 8, Imm: end - 1},
			{Opcode: asm.ClassJMP | asm.JmpJSLT, Dst: 8, Imm: end},
			{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 8, Imm: end},
		}[g.src.n(4)]
		stay.Offset = back(1)
		g.emit(add, stay)
	case 2:
		leave.Offset = 1
		g.emit(add, leave, asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: back(2)})
	case 3:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: back(0)})
		g.insns[entry+2].Offset = int16(len(g.insns) - entry - 3)
	}
}

// copyLoop emits a loop that copies elements of 1, 2, 4 or 8 bytes as
// clang compiles memcpy (or fills them, as memset): from the context or the stack to the stack (or
// within the context), through a base plus the counter r8, two bases, or
// two pointers, leaving with "jeq; ja", or staying with "jne" or "jlt".
// The amd64 JIT copies such loops wide (compile_idiom.go). Spans overlap
// at random; when faults are allowed, one sometimes crosses the end of
// its region in its middle.
func (g *progGen) copyLoop() {
	size := int32(1) << g.src.n(4)
	sbase, dbase := uint8(10), uint8(10)
	if g.src.u8()&3 == 0 {
		sbase = 9
		if g.src.u8()&1 == 0 {
			dbase = 9
		}
	}
	slo, shi := spanRegion(sbase)
	dlo, dhi := spanRegion(dbase)
	maxSpan := min(shi-slo, dhi-dlo)
	n := 1 + int32(g.src.n(int(maxSpan/size)))
	span := n * size
	pick := func(lo, hi int32) int32 {
		off := lo + int32(g.src.n(int(hi-lo-span)/int(size)+1))*size
		if g.src.u8()&1 == 0 {
			off = lo + int32(g.src.n(int(hi-lo-span)+1)) // unaligned
		}
		if g.allowFaults && g.src.u8()&3 == 0 {
			off += int32(g.src.n(2*int(span))) - int32(span)/2 // crosses an end
		}
		return off
	}
	soff, doff := pick(slo, shi), pick(dlo, dhi)
	start := int32(g.src.n(4)) * size // the counter's first value
	if start >= span {
		start = 0
	}
	bound := span
	// Addresses are base + off + r8, with r8 from start to bound.
	soff -= start
	doff -= start
	// Registers: distinct temporaries among r0..r7.
	regs := []uint8{0, 1, 2, 3, 4, 5, 6, 7}
	for i := range regs {
		j := i + g.src.n(len(regs)-i)
		regs[i], regs[j] = regs[j], regs[i]
	}
	t, v, t2 := regs[0], regs[1], regs[2]
	sz := sizeCodes[bits.TrailingZeros(uint(size))]
	mov := func(dst, src uint8) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: dst, Src: src}
	}
	add := func(dst, src uint8) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: dst, Src: src}
	}
	addImm := func(dst uint8, imm int32) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: dst, Imm: imm}
	}
	form := g.src.n(4)
	if form == 2 {
		// Two pointers, set up before the loop.
		g.emit(mov(t, sbase), addImm(t, soff+start), mov(t2, dbase), addImm(t2, doff+start))
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 8, Imm: start})
	head := len(g.insns)
	switch form {
	case 0: // one base, as clang does when both are in one buffer
		if sbase == dbase {
			g.emit(mov(t, sbase), add(t, 8),
				asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sz, Dst: v, Src: t, Offset: int16(soff)},
				addImm(t, doff-soff),
				asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: t, Src: v, Offset: int16(soff)})
			break
		}
		fallthrough
	case 1: // two bases
		g.emit(mov(t, sbase), add(t, 8),
			asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sz, Dst: v, Src: t, Offset: int16(soff)},
			mov(t2, dbase), add(t2, 8),
			asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: t2, Src: v, Offset: int16(doff)})
	case 2:
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sz, Dst: v, Src: t},
			asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: t2, Src: v},
			addImm(t, size), addImm(t2, size))
	case 3: // a fill, as clang compiles memset: an immediate or a register
		g.emit(mov(t2, dbase), add(t2, 8))
		if g.src.u8()&1 == 0 {
			g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sz, Dst: t2, Offset: int16(doff), Imm: int32(g.src.u32())})
		} else {
			g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: t2, Src: g.anyReg(), Offset: int16(doff)})
		}
	}
	g.emit(addImm(8, size))
	back := func(extra int) int16 { return int16(head - len(g.insns) - 1 - extra) }
	switch g.src.n(3) {
	case 0:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 8, Imm: bound, Offset: 1})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: back(0)})
	case 1:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 8, Imm: bound, Offset: back(0)})
	default:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJLT, Dst: 8, Imm: bound, Offset: back(0)})
	}
}

// spanRegion is where the generated loops' spans lie, from their base
// register: the stack's 512 bytes below r10, or the context (r9).
func spanRegion(base uint8) (lo, hi int32) {
	if base == 10 {
		return -512, 0
	}
	return 0, fuzzCtxSize
}

// compareLoop emits a loop that compares two byte strings as clang
// compiles strcmp (rotated: entered in the middle, the zero and bound
// tests in a second block) or memcmp (one block, "jne out"; "jlt" or
// "jne" back), through two bases plus a counter. The amd64 JIT compares
// them 16 bytes at a time (compile_idiom_cmp.go). The strings are the
// stack's (mostly zeros) or the context's, sometimes the same span; when
// faults are allowed, one sometimes crosses the end of its region.
func (g *progGen) compareLoop() {
	sbase, dbase := uint8(10), uint8(10)
	if g.src.u8()&1 == 0 {
		sbase = 9
		if g.src.u8()&1 == 0 {
			dbase = 9
		}
	}
	slo, shi := spanRegion(sbase)
	dlo, dhi := spanRegion(dbase)
	span := 2 + int32(g.src.n(int(min(shi-slo, dhi-dlo))-1))
	// Elements of 1 byte mostly, else 2, 4 or 8 (the span, the offsets
	// and the counter in bytes, multiples of the size).
	size, code := int32(1), uint8(asm.SizeB)
	if k := g.src.n(8); k >= 5 {
		size, code = []int32{2, 4, 8}[k-5], []uint8{asm.SizeH, asm.SizeW, asm.SizeDW}[k-5]
		span = max(span/size, 2) * size
	}
	pick := func(lo, hi int32) int32 {
		off := lo + int32(g.src.n(int(hi-lo-span)+1))
		if g.allowFaults && g.src.u8()&3 == 0 {
			off += int32(g.src.n(2*int(span))) - span/2 // crosses an end
		}
		return off &^ (size - 1)
	}
	soff, doff := pick(slo, shi), pick(dlo, dhi)
	if sbase == dbase && g.src.u8()&1 == 0 {
		doff = soff // equal strings
	}
	start := int32(g.src.n(4))
	if start >= span/size-1 {
		start = 0
	}
	start *= size
	soff -= start
	doff -= start
	regs := []uint8{0, 1, 2, 3, 4, 5, 6, 7}
	for i := range regs {
		j := i + g.src.n(len(regs)-i)
		regs[i], regs[j] = regs[j], regs[i]
	}
	t, v, t2, w, t3 := regs[0], regs[1], regs[2], regs[3], regs[4]
	mov := func(dst, src uint8) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: dst, Src: src}
	}
	add := func(dst, src uint8) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: dst, Src: src}
	}
	ldxb := func(dst, src uint8, off int32) asm.Instruction {
		return asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | code, Dst: dst, Src: src, Offset: int16(off)}
	}
	jmpClass := func() uint8 {
		if g.src.u8()&1 == 0 {
			return asm.ClassJMP32
		}
		return asm.ClassJMP
	}
	zero := g.src.u8()&3 != 0
	var outs []int // jumps to the end, to patch
	jump := func(ins asm.Instruction) {
		outs = append(outs, len(g.insns))
		g.emit(ins)
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 8, Imm: start})
	if g.src.u8()&1 == 0 {
		// clang's strcmp: ja body; test: zero and bound tests; body.
		entry := len(g.insns)
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
		test := len(g.insns)
		if zero {
			jump(asm.Instruction{Opcode: jmpClass() | asm.JmpJEQ, Dst: v})
		}
		g.emit(mov(8, t3), asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 8, Imm: size})
		boundAt := len(g.insns)
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: t3, Imm: span - size})
		jump(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
		body := len(g.insns)
		g.insns[entry].Offset = int16(body - entry - 1)
		g.insns[boundAt].Offset = int16(body - boundAt - 1)
		g.emit(mov(t3, 8), mov(t, sbase), add(t, t3), ldxb(v, t, soff), mov(t2, dbase), add(t2, t3), ldxb(w, t2, doff))
		g.emit(asm.Instruction{Opcode: jmpClass() | asm.JmpJEQ | asm.SourceX, Dst: v, Src: w, Offset: int16(test - len(g.insns) - 1)})
	} else {
		// memcmp: one block.
		head := len(g.insns)
		g.emit(mov(t, sbase), add(t, 8), ldxb(v, t, soff), mov(t2, dbase), add(t2, 8), ldxb(w, t2, doff))
		jump(asm.Instruction{Opcode: jmpClass() | asm.JmpJNE | asm.SourceX, Dst: v, Src: w})
		if zero {
			jump(asm.Instruction{Opcode: jmpClass() | asm.JmpJEQ, Dst: w})
		}
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 8, Imm: size})
		op := uint8(asm.JmpJLT)
		if g.src.u8()&1 == 0 {
			op = asm.JmpJNE
		}
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | op, Dst: 8, Imm: span, Offset: int16(head - len(g.insns) - 1)})
	}
	for _, o := range outs {
		g.insns[o].Offset = int16(len(g.insns) - o - 1)
	}
}

// findLoop emits a loop that looks for a byte as clang compiles strlen,
// memchr or "find c or the end" (jeq to the needles, jeq bound out and ja
// back, or a temporary written before each exit and jne bound back),
// through a base plus a counter. The needles are immediates (0 mostly,
// sometimes out of the byte's range) or a register the loop does not
// write (sometimes from 256 on). The amd64 JIT scans such loops 16 bytes
// at a time (compile_idiom_find.go). When faults are allowed, the span
// sometimes crosses the end of its region.
func (g *progGen) findLoop() {
	base := uint8(10)
	if g.src.u8()&1 == 0 {
		base = 9
	}
	lo, hi := spanRegion(base)
	span := 2 + int32(g.src.n(int(hi-lo)-1))
	off := lo + int32(g.src.n(int(hi-lo-span)+1))
	if g.allowFaults && g.src.u8()&3 == 0 {
		off += int32(g.src.n(2*int(span))) - span/2 // crosses an end
	}
	start := int32(g.src.n(4))
	if start >= span-1 {
		start = 0
	}
	off -= start
	regs := []uint8{0, 1, 2, 3, 4, 5, 6, 7}
	for i := range regs {
		j := i + g.src.n(len(regs)-i)
		regs[i], regs[j] = regs[j], regs[i]
	}
	t, v, nr, tmp := regs[0], regs[1], regs[2], regs[3]
	cls := func() uint8 {
		if g.src.u8()&1 == 0 {
			return asm.ClassJMP32
		}
		return asm.ClassJMP
	}
	var outs []int // jumps to the end, to patch
	jump := func(ins asm.Instruction) {
		outs = append(outs, len(g.insns))
		g.emit(ins)
	}
	needle := func() {
		switch k := g.src.n(8); {
		case k < 3:
			jump(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: v})
		case k < 5:
			jump(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: v, Imm: int32(g.src.u8())})
		case k == 5:
			jump(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: v, Imm: []int32{-1, 256, 0x1ff}[g.src.n(3)]})
		default:
			if g.src.u8()&1 == 0 {
				jump(asm.Instruction{Opcode: cls() | asm.JmpJEQ | asm.SourceX, Dst: v, Src: nr})
			} else {
				jump(asm.Instruction{Opcode: cls() | asm.JmpJEQ | asm.SourceX, Dst: nr, Src: v})
			}
		}
	}
	nv := uint64(g.src.u8())
	switch g.src.n(4) {
	case 0:
		nv |= 1 << 32
	case 1:
		nv += 256
	}
	g.lddw(nr, nv)
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 8, Imm: start})
	head := len(g.insns)
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: t, Src: base},
		asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: t, Src: 8},
		asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeB, Dst: v, Src: t, Offset: int16(off)})
	slenp := g.src.u8()&1 == 0
	if slenp {
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: tmp, Src: 8})
	}
	needle()
	if g.src.u8()&1 == 0 {
		needle()
	}
	if slenp {
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: tmp, Imm: span})
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 8, Imm: 1})
	if slenp {
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 8, Imm: span, Offset: int16(head - len(g.insns) - 1)})
	} else {
		jump(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 8, Imm: span})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(head - len(g.insns) - 1)})
	}
	for _, o := range outs {
		g.insns[o].Offset = int16(len(g.insns) - o - 1)
	}
}

// call emits a helper call, a callx, a local call, an array lookup or a
// hash update.
func (g *progGen) call() {
	switch k := g.src.n(5); {
	case k == 0 && g.funcs > 0 && g.depth < 3:
		f := g.src.n(g.funcs)
		g.calls = append(g.calls, len(g.insns))
		g.emit(asm.Instruction{Opcode: asm.OpCall, Src: asm.PseudoCall, Imm: int32(f)})
	case k == 1:
		r := g.freeReg()
		n := []int32{1, 2, 7, 3}[g.src.n(4)] // 3 is not a helper: callx fails
		if !g.allowFaults && n == 3 {
			n = 1
		}
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: r, Imm: n})
		g.emit(asm.Instruction{Opcode: asm.OpCallX, Dst: r})
	case k == 2:
		g.lookup()
	case k == 3:
		g.update()
	default:
		g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: []int32{1, 2, 7}[g.src.n(3)]})
	}
}

// Maps of generated programs: an array with a value size that is not a
// multiple of 8, a hash map, which lookups leave to the helper, and an LRU
// hash map, which only updates use.
const (
	fuzzArrayIndex   = 0
	fuzzHashIndex    = 1
	fuzzLRUIndex     = 2
	fuzzArrayEntries = 5
)

func fuzzMaps() []vm.Map {
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 12, MaxEntries: fuzzArrayEntries})
	if err != nil {
		panic(err)
	}
	hash, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	if err != nil {
		panic(err)
	}
	lru, err := maps.New(&maps.Spec{Name: "lru", Type: maps.LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 8})
	if err != nil {
		panic(err)
	}
	return []vm.Map{array, hash, lru}
}

// lookup emits a call of the ArrayLookup helper (9): r1 a map pointer
// (lddw r1, as clang emits it, or through another register, sometimes off
// the table's grid or not a map at all), r2 a key on the stack or in the
// context (or, when faults are allowed, anywhere). When the lookup is
// certain to be answered inline, the value is written and read through r0.
func (g *progGen) lookup() {
	m := int32(fuzzArrayIndex)
	if g.src.u8()&3 == 0 {
		m = fuzzHashIndex
	}
	inline := m == fuzzArrayIndex
	if g.src.u8()&1 == 0 {
		g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: 1, Src: asm.PseudoMapFD, Imm: m}, asm.Instruction{})
	} else {
		r := uint8(3 + g.src.n(5)) // r3..r7
		g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: r, Src: asm.PseudoMapFD, Imm: m}, asm.Instruction{})
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 1, Src: r})
	}
	switch g.src.n(8) {
	case 0: // off the grid, past or before the table
		inline = false
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 1, Imm: []int32{8, 16, 32, -16, 1}[g.src.n(5)]})
	case 1: // not a map
		inline = false
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 1, Src: g.anyReg()})
	}
	// The key: often small, sometimes past the end or huge.
	k := int32(g.src.n(fuzzArrayEntries + 2))
	if g.src.u8()&7 == 0 {
		k = int32(g.src.u32())
	}
	var base uint8
	var off int16
	switch {
	case g.allowFaults && g.src.u8()&7 == 0:
		// Anywhere: checked modes only, the helper's if unreadable.
		inline = false
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 2, Src: g.anyReg()})
		g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: 9})
		return
	case g.src.u8()&1 == 0:
		base, off = 10, int16(-4-4*g.src.n(vm.StackFrameSize/4))
		if g.inFunc && g.src.u8()&7 == 0 {
			off += vm.StackFrameSize // the caller's frame
		}
	default:
		base, off = 9, int16(g.src.n(fuzzCtxSize-3))
	}
	if g.src.u8()&3 != 0 {
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: base, Offset: off, Imm: k})
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 2, Src: base})
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 2, Imm: int32(off)})
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: 9})
	if !inline || g.src.u8()&1 == 0 {
		return
	}
	// if r0 != 0 { value[off] = src; reg = value[off'] }
	g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 0, Offset: 2})
	g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeW, Dst: 0, Src: g.anyReg(), Offset: int16(4 * g.src.n(3))})
	g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeW, Dst: g.freeReg(), Src: 0, Offset: int16(4 * g.src.n(3))})
}

// update emits a call of the HashUpdate helper (10): r1 the hash map or
// the LRU hash map (lddw r1, as clang emits it, so that it may be answered
// inline), or the array, or a map pointer through another register; the key and the
// value on the stack or in the context (or, when faults are allowed,
// anywhere); flags mostly BPF_ANY or BPF_EXIST. Keys are few, so that
// updates meet keys earlier ones inserted and fill the map.
func (g *progGen) update() {
	m := []int32{fuzzHashIndex, fuzzHashIndex, fuzzHashIndex, fuzzLRUIndex, fuzzLRUIndex, fuzzArrayIndex}[g.src.n(6)]
	if g.src.u8()&3 != 0 {
		g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: 1, Src: asm.PseudoMapFD, Imm: m}, asm.Instruction{})
	} else {
		r := uint8(5 + g.src.n(3)) // r5..r7
		g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: r, Src: asm.PseudoMapFD, Imm: m}, asm.Instruction{})
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 1, Src: r})
	}
	// An LRU key is always one of 6, stored after the value (which may
	// overlap it), so the map never evicts: which element goes depends
	// on the map's history, which the engines' runs do not share.
	lru := m == fuzzLRUIndex
	for _, i := range []int{1, 0} { // the value in r3, then the key in r2
		reg, size := uint8(2+i), []int{4, 8}[i]
		sizeOp := []uint8{asm.SizeW, asm.SizeDW}[i]
		smallKey := lru && i == 0
		if g.allowFaults && !smallKey && g.src.u8()&15 == 0 {
			g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: reg, Src: g.anyReg()})
			continue
		}
		base, off := uint8(9), int16(g.src.n(fuzzCtxSize-size+1))
		if g.src.u8()&3 != 0 {
			base, off = 10, int16(-size-size*g.src.n(vm.StackFrameSize/size))
		}
		switch k := g.src.n(4); {
		case k < 2 || smallKey: // a small key, or a value from an immediate
			g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sizeOp, Dst: base, Offset: off, Imm: int32(g.src.n(6))})
		case k == 2: // from a register
			g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sizeOp, Dst: base, Offset: off, Src: g.anyReg()})
		}
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: reg, Src: base})
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: reg, Imm: int32(off)})
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 4, Imm: []int32{0, 0, 0, 2, 1, 3}[g.src.n(6)]})
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: 10})
}

func (g *progGen) packetLoad() {
	sz := []uint8{asm.SizeB, asm.SizeH, asm.SizeW}[g.src.n(3)]
	imm := int32(int8(g.src.u8()))
	if g.src.u8()&1 == 0 {
		g.emit(asm.Instruction{Opcode: asm.ClassLD | asm.ModeABS | sz, Imm: imm})
	} else {
		g.emit(asm.Instruction{Opcode: asm.ClassLD | asm.ModeIND | sz, Src: g.anyReg(), Imm: imm})
	}
}

// fuzzInput builds the context, packet and budget of a generated program.
func fuzzInput(seed uint32) diffInput {
	mem := make([]byte, fuzzCtxSize)
	for i := range mem {
		mem[i] = byte(seed>>(i%4*8)) ^ byte(i*37)
	}
	pkt := make([]byte, 32)
	binary.LittleEndian.PutUint32(pkt, seed)
	for i := 4; i < len(pkt); i++ {
		pkt[i] = byte(i * 11)
	}
	budget := uint64(0) // the default
	if seed%5 == 0 {
		budget = uint64(seed % 300)
	}
	return diffInput{mem: mem, packet: pkt, budget: budget}
}

// FuzzJITvsInterpreter runs generated programs on the interpreter and on
// the JIT in every mode (checked modes only when the program may fault)
// and compares r0, errors, the context and the stack.
func FuzzJITvsInterpreter(f *testing.F) {
	if !jit.Supported {
		f.Skip(jit.ErrUnsupportedArch)
	}
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		insns, allowFaults := genProgram(data)
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: fuzzMaps()}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			text, _ := asm.Disassemble(insns)
			t.Fatalf("generated an invalid program: %v\n%s", err, text)
		}
		var seed uint32
		if len(data) >= 4 {
			seed = binary.LittleEndian.Uint32(data[len(data)-4:])
		}
		modes := allModes
		if allowFaults {
			modes = checkedModes
		}
		if err := diffEngines(vp, fuzzInput(seed), modes...); err != nil {
			text, _ := asm.Disassemble(insns)
			t.Fatalf("%v\nprogram:\n%s", err, text)
		}
		// Again with slices of the budget so small that nearly every
		// charging instruction ends one, on a program compiled for them:
		// resuming must not change anything.
		defer jit.SetSlice(uint64(seed%5) + 1)()
		vp, err = vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: fuzzMaps()}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			t.Fatal(err)
		}
		if err := diffEngines(vp, fuzzInput(seed), modes...); err != nil {
			text, _ := asm.Disassemble(insns)
			t.Fatalf("slices of %d: %v\nprogram:\n%s", seed%5+1, err, text)
		}
		// Slices longer than a loop's iteration, for loops that run with
		// one budget test per iteration (compile_loopbudget.go): a slice
		// then ends while their copy runs, where the ordinary code must
		// take over and the copy resume after.
		// Every loop that may: the mechanism is the same for loops
		// with fewer budget tests than make it worth it.
		defer jit.SetBudgetLoopMinTests(1)()
		if jit.BudgetLoops(vp, jit.Options{Unchecked: true}) == 0 {
			return
		}
		slice := uint64(6 + seed%90)
		defer jit.SetSlice(slice)()
		vp, err = vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: fuzzMaps()}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			t.Fatal(err)
		}
		if err := diffEngines(vp, fuzzInput(seed), modes...); err != nil {
			text, _ := asm.Disassemble(insns)
			t.Fatalf("slices of %d: %v\nprogram:\n%s", slice, err, text)
		}
	})
}

// FuzzJITArbitrary runs arbitrary bytecode that passes structural
// validation on the interpreter and the checked JIT: nothing may crash the
// process, and both must agree.
func FuzzJITArbitrary(f *testing.F) {
	if !jit.Supported {
		f.Skip(jit.ErrUnsupportedArch)
	}
	for _, seed := range fuzzSeeds {
		insns, _ := genProgram(seed)
		f.Add(asm.Encode(nil, insns))
	}
	f.Add(asm.Encode(nil, asm.MustAssemble("ldxdw %r0, [%r1+8]\nexit")))
	f.Add(asm.Encode(nil, asm.MustAssemble("stxdw [%r1-8], %r1\nja -2\nexit")))
	f.Fuzz(func(t *testing.T, code []byte) {
		vp, err := vm.LoadBytes("fuzz", code, &vm.Options{Helpers: testHelpers})
		if err != nil || jitRefuses(vp.Instructions()) {
			return // see TestRejectsLDDWIntoR10 and TestRejectsCallbacks
		}
		in := fuzzInput(uint32(len(code)))
		in.budget = 5000
		if err := diffEngines(vp, in, checkedModes...); err != nil {
			text, _ := asm.Disassemble(vp.Instructions())
			t.Fatalf("%v\nprogram:\n%s", err, text)
		}
	})
}

// fuzzSeeds start the corpus with a spread of generated programs.
var fuzzSeeds = func() [][]byte {
	var seeds [][]byte
	for i := 0; i < 64; i++ {
		b := make([]byte, 256)
		x := uint32(i*2654435761 + 1)
		for j := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[j] = byte(x)
		}
		seeds = append(seeds, b)
	}
	return seeds
}()

// seedPrograms loads the programs the generator makes of fuzzSeeds.
func seedPrograms(t *testing.T) []*vm.Program {
	var programs []*vm.Program
	for _, seed := range fuzzSeeds {
		insns, _ := genProgram(seed)
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: fuzzMaps()}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			t.Fatal(err)
		}
		programs = append(programs, vp)
	}
	return programs
}

// jitRefuses reports whether insns load a constant into r10 (which vm
// accepts) or a callback address: programs the JIT refuses to compile.
func jitRefuses(insns []asm.Instruction) bool {
	for i := 0; i < len(insns); i++ {
		if insns[i].Opcode == asm.OpLDDW {
			if insns[i].Dst == asm.R10 || insns[i].Src == asm.PseudoFunc {
				return true
			}
			i++
		}
	}
	return false
}
