package jit_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// Programs for what the compiler tracks inside a block (frontend.Tracking)
// and for the budget's charging at conditional jumps: stack slots stored
// and loaded back (overlapping, through r10 and through copies of it),
// registers that hold r10 plus a constant and then change, forward jumps
// whose fall-through path continues the block, loops, and inline lookups
// with the null test they answer. Each program runs with every budget up
// to the point where it completes, on the interpreter and on the JIT in
// every mode: the budget must run out at the same instruction, with the
// same memory.

// trackGen generates such programs.
type trackGen struct {
	r           *rand.Rand
	insns       []asm.Instruction
	allowFaults bool
	depth       int
}

func (g *trackGen) emit(ins ...asm.Instruction) { g.insns = append(g.insns, ins...) }

var trackOffsets = []int16{-1, -2, -4, -8, -12, -16, -24, -5}

// slot returns an offset from r10 inside the frame for size bytes.
func (g *trackGen) slot(size int) int16 {
	off := trackOffsets[g.r.IntN(len(trackOffsets))]
	if g.r.IntN(8) == 0 {
		off = -int16(vm.StackFrameSize)
	}
	if int(off) > -size {
		off = int16(-size)
	}
	return off
}

// frameReg makes a register (r3..r7) r10 plus a constant and returns it
// and the constant.
func (g *trackGen) frameReg() (uint8, int16) {
	r := uint8(3 + g.r.IntN(5))
	k := -int16(8 * g.r.IntN(8))
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: r, Src: 10})
	if k != 0 || g.r.IntN(2) == 0 {
		if g.r.IntN(3) == 0 {
			g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluSUB, Dst: r, Imm: -int32(k)})
		} else {
			g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: r, Imm: int32(k)})
		}
	}
	return r, k
}

func (g *trackGen) access() {
	size := []int{1, 2, 4, 8}[g.r.IntN(4)]
	sz := map[int]uint8{1: asm.SizeB, 2: asm.SizeH, 4: asm.SizeW, 8: asm.SizeDW}[size]
	base, k := uint8(10), int16(0)
	if g.r.IntN(3) == 0 {
		base, k = g.frameReg()
	}
	off := g.slot(size) - k
	if g.allowFaults && g.r.IntN(10) == 0 {
		off += []int16{600, 8, -4096, int16(vm.StackFrameSize)}[g.r.IntN(4)]
	}
	reg := uint8(g.r.IntN(9))
	switch g.r.IntN(5) {
	case 0, 1:
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz, Dst: base, Src: reg, Offset: off})
	case 2:
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sz, Dst: base, Offset: off, Imm: g.r.Int32()})
	default:
		mode := uint8(asm.ModeMEM)
		if size != 8 && g.r.IntN(4) == 0 {
			mode = asm.ModeMEMSX
		}
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | mode | sz, Dst: uint8(g.r.IntN(9)), Src: base, Offset: off})
	}
}

func (g *trackGen) alu() {
	dst := uint8(g.r.IntN(9))
	ops := []uint8{asm.AluADD, asm.AluSUB, asm.AluMOV, asm.AluXOR, asm.AluMUL, asm.AluLSH}
	op := ops[g.r.IntN(len(ops))]
	class := uint8(asm.ClassALU64)
	if g.r.IntN(4) == 0 {
		class = asm.ClassALU
	}
	if g.r.IntN(2) == 0 {
		g.emit(asm.Instruction{Opcode: class | op | asm.SourceX, Dst: dst, Src: uint8(g.r.IntN(10))})
	} else {
		g.emit(asm.Instruction{Opcode: class | op, Dst: dst, Imm: int32(g.r.IntN(64)) - 8})
	}
}

var trackConds = []uint8{asm.JmpJEQ, asm.JmpJNE, asm.JmpJGT, asm.JmpJSLT, asm.JmpJSET}

func (g *trackGen) cond(off int16) asm.Instruction {
	class := uint8(asm.ClassJMP)
	if g.r.IntN(4) == 0 {
		class = asm.ClassJMP32
	}
	ins := asm.Instruction{Opcode: class | trackConds[g.r.IntN(len(trackConds))], Dst: uint8(g.r.IntN(10)), Offset: off}
	if g.r.IntN(2) == 0 {
		ins.Opcode |= asm.SourceX
		ins.Src = uint8(g.r.IntN(10))
	} else {
		ins.Imm = int32(g.r.IntN(16))
	}
	return ins
}

func (g *trackGen) forward() {
	at := len(g.insns)
	g.emit(g.cond(0))
	g.depth++
	g.block(1 + g.r.IntN(5))
	g.depth--
	g.insns[at].Offset = int16(len(g.insns) - at - 1)
}

func (g *trackGen) loop() {
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 8, Imm: int32(1 + g.r.IntN(4))})
	start := len(g.insns)
	g.depth++
	g.block(g.r.IntN(3))
	// A jump out of the loop (break), charged out of line.
	brk := -1
	if g.r.IntN(2) == 0 {
		brk = len(g.insns)
		g.emit(g.cond(0))
	}
	g.block(1 + g.r.IntN(4))
	g.depth--
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluSUB, Dst: 8, Imm: 1})
	back := start - len(g.insns) - 1
	if g.r.IntN(2) == 0 {
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 8, Offset: int16(back)})
	} else {
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 8, Offset: 1})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(back - 1)})
	}
	if brk >= 0 {
		g.insns[brk].Offset = int16(len(g.insns) - brk - 1 + g.r.IntN(2))
		if g.insns[brk].Offset > 0 && len(g.insns) == brk+int(g.insns[brk].Offset) {
			g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 7, Imm: 1})
		}
	}
}

// lookup emits a lookup whose key is stored in this block (from a
// register or an immediate, 4 or 8 bytes), through r2 = r10 + k, often
// followed by a null test in either sense.
func (g *trackGen) lookup() {
	m := int32(fuzzArrayIndex)
	if g.r.IntN(4) == 0 {
		m = fuzzHashIndex
	}
	g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: 1, Src: asm.PseudoMapFD, Imm: m}, asm.Instruction{})
	off := -int16(8 * (1 + g.r.IntN(4)))
	switch g.r.IntN(4) {
	case 0:
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: 10, Offset: off, Imm: int32(g.r.IntN(fuzzArrayEntries + 2))})
	case 1:
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: 10, Src: 6, Offset: off})
	case 2: // then overwritten in part
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeW, Dst: 10, Src: 6, Offset: off})
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeB, Dst: 10, Offset: off + int16(g.r.IntN(2)), Imm: 3})
	default:
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeW, Dst: 10, Src: 6, Offset: off})
	}
	if g.r.IntN(4) == 0 {
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluAND, Dst: 6, Imm: 7}) // the key's register changes
	}
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 2, Src: 10})
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 2, Imm: int32(off)})
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: 9})
	deref := []asm.Instruction{
		{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeW, Dst: 0, Src: uint8(g.r.IntN(9)), Offset: int16(4 * g.r.IntN(3))},
		{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeW, Dst: 7, Src: 0, Offset: int16(4 * g.r.IntN(3))},
	}
	if m != fuzzArrayIndex && !g.allowFaults {
		deref = []asm.Instruction{{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: 7, Src: 0}}
	}
	switch g.r.IntN(4) {
	case 0: // if r0 == 0 skip the use
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 0, Offset: int16(len(deref))})
		g.emit(deref...)
	case 1: // if r0 != 0 use it, else skip
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 0, Offset: 1})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(len(deref))})
		g.emit(deref...)
	case 2: // if r0 != 0 goto the use, after other code
		at := len(g.insns)
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 0})
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 7, Imm: 5})
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(len(deref))})
		g.insns[at].Offset = int16(len(g.insns) - at - 1)
		g.emit(deref...)
	default: // r0 used as a number
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluXOR | asm.SourceX, Dst: 7, Src: 0})
	}
}

func (g *trackGen) block(n int) {
	for range n {
		switch k := g.r.IntN(16); {
		case k < 6:
			g.access()
		case k < 9:
			g.alu()
		case k < 11:
			g.forward()
		case k == 11 && g.depth == 0:
			g.loop()
		case k < 14:
			g.lookup()
		case k == 14:
			g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: 1})
		default:
			g.frameReg()
		}
	}
}

func genTracked(seed uint64) (insns []asm.Instruction, allowFaults bool) {
	g := &trackGen{r: rand.New(rand.NewPCG(seed, 0x7ac4))}
	g.allowFaults = g.r.IntN(4) == 0
	for r := uint8(0); r <= 8; r++ {
		pair := asm.LDDW(r, uint64(g.r.IntN(8))|uint64(g.r.Uint32()&0xff00))
		g.emit(pair[0], pair[1])
	}
	g.block(8 + g.r.IntN(16))
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: 0, Src: 7})
	g.emit(asm.Instruction{Opcode: asm.OpExit})
	return g.insns, g.allowFaults
}

// diffBudgets compiles vp in each of modes and compares every mode with
// the interpreter at budgets 1, 2, ... until a run of the interpreter
// completes (at most maxBudget).
func diffBudgets(vp *vm.Program, modes []jit.Options, maxBudget uint64) error {
	env := vm.NewEnv()
	in := diffInput{mem: make([]byte, fuzzCtxSize), packet: []byte{1, 2, 3, 4}}
	mem := make([]byte, len(in.mem))
	env.SetContext(mem)
	env.SetPacket(in.packet)
	progs := make([]*jit.Program, len(modes))
	for i := range modes {
		p, err := jit.Compile(vp, &modes[i])
		if err != nil {
			return fmt.Errorf("%+v: compile: %w", modes[i], err)
		}
		defer p.Close()
		progs[i] = p
	}
	for in.budget = 1; in.budget <= maxBudget; in.budget++ {
		want := runOutcome(vp, env, mem, in, vp.Maps())
		for i, p := range progs {
			got := runOutcome(p, env, mem, in, vp.Maps())
			switch {
			case got.r0 != want.r0 || got.err != want.err:
				return fmt.Errorf("%+v, budget %d: jit %v, interpreter %v", modes[i], in.budget, got, want)
			case !bytes.Equal(got.mem, want.mem):
				return fmt.Errorf("%+v, budget %d: context memory differs", modes[i], in.budget)
			case !bytes.Equal(got.stack, want.stack):
				return fmt.Errorf("%+v, budget %d: stack differs (%v)\njit:         %x\ninterpreter: %x", modes[i], in.budget, want, got.stack, want.stack)
			case !slices.EqualFunc(got.maps, want.maps, bytes.Equal):
				return fmt.Errorf("%+v, budget %d: array maps differ", modes[i], in.budget)
			}
		}
		if want.err == "" {
			return nil
		}
	}
	return nil
}

func TestTrackedBlocks(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	n := 400
	switch {
	case testing.Short():
		n = 50
	case !long():
		n = 100
		t.Logf("%d programs: UEBPF_LONG=1 runs 400", n)
	}
	for seed := range uint64(n) {
		insns, allowFaults := genTracked(seed)
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: fuzzMaps()}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			text, _ := asm.Disassemble(insns)
			t.Fatalf("seed %d: generated an invalid program: %v\n%s", seed, err, text)
		}
		modes := allModes
		if allowFaults {
			modes = checkedModes
		}
		if err := diffBudgets(vp, modes, 400); err != nil {
			text, _ := asm.Disassemble(insns)
			t.Fatalf("seed %d: %v\nprogram:\n%s", seed, err, text)
		}
	}
}

// TestLiveIn runs programs that read registers as a run starts them, in
// the first block and after it, with and without writes before: the start
// stub sets up only the registers a program may read first
// (the front end's LiveIn).
func TestLiveIn(t *testing.T) {
	var srcs []string
	for r := 0; r <= 10; r++ {
		srcs = append(srcs,
			fmt.Sprintf("mov %%r0, %%r%d\nexit", r),
			fmt.Sprintf("mov %%r0, 3\nja +0\nadd %%r0, %%r%d\nexit", r),
			fmt.Sprintf("mov %%r0, 7\njeq %%r0, 7, +1\nmov %%r%d, 1\nadd %%r0, %%r%d\nexit", r%10, r),
		)
		if r < 10 {
			srcs = append(srcs,
				fmt.Sprintf("mov %%r%d, 9\nmov %%r0, %%r%d\nexit", r, r),
				fmt.Sprintf("add %%r%d, 9\nmov %%r0, %%r%d\nexit", r, r),
				fmt.Sprintf("mov32 %%r%d, 9\nja +0\nmov %%r0, %%r%d\nexit", r, r),
				// A loop back to the first block: its writes may come
				// after reads on the second pass.
				fmt.Sprintf("mov %%r0, %%r%d\nmov %%r%d, 5\nadd %%r8, 1\njlt %%r8, 3, -3\nexit", r, r),
				fmt.Sprintf("mov %%r8, 0\nadd %%r0, %%r%d\nmov %%r%d, 5\nadd %%r8, 1\njlt %%r8, 3, -4\nexit", r, r),
				fmt.Sprintf("stxdw [%%r10-8], %%r%d\nldxdw %%r0, [%%r10-8]\nexit", r),
				fmt.Sprintf("lddw %%r%d, 0x1234\nmov %%r0, %%r%d\nexit", r, r),
			)
		}
	}
	for _, src := range srcs {
		t.Run("", func(t *testing.T) {
			diffSource(t, src, diffInput{mem: make([]byte, 16), packet: []byte{1, 2}}, allModes)
		})
	}
	// exit reads r0 whatever its register fields say (found by
	// FuzzJITArbitrary).
	vp, err := vm.LoadBytes("exit", asm.Encode(nil, []asm.Instruction{{Opcode: asm.OpExit, Dst: 1, Src: 3}}), &vm.Options{Helpers: testHelpers})
	if err != nil {
		t.Fatal(err)
	}
	if err := diffEngines(vp, diffInput{mem: make([]byte, 16)}, allModes...); err != nil {
		t.Fatal(err)
	}
}

// The deepest use of the native stack of generated code, 7 nested local
// calls and the slow path of a checked access at the bottom (the first
// access to the context walks the region list), from fresh goroutines
// whose stacks start small, while the collector runs.
func TestDeepNativeStack(t *testing.T) {
	src := `
		mov %r9, %r1
		mov %r1, 7
		call local f
		exit
	f:
		stxdw [%r10-512], %r1
		sub %r1, 1
		jeq %r1, 0, +2
		call local f
		ja +1
		ldxdw %r0, [%r9+8]
		ldxdw %r2, [%r10-512]
		add %r0, %r2
		exit`
	diffSource(t, src, diffInput{mem: make([]byte, 16)}, allModes)
	vp := loadVM(t, src, nil)
	p := compile(t, vp, jit.Options{})
	ctx := make([]byte, 16)
	ctx[8] = 100
	want, err := p.Run(ctx)
	if err != nil || want != 100+28 {
		t.Fatal(want, err)
	}
	defer collectConstantly()()
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			ctx := make([]byte, 16)
			ctx[8] = 100
			for range 10 {
				if r0, err := p.Run(ctx); r0 != want || err != nil {
					t.Errorf("%d, %v", r0, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
