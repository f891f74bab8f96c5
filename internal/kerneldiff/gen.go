package kerneldiff

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// Config selects what generated programs may use.
type Config struct {
	// V4 allows cpu v4 instructions (Linux 6.6): sdiv, smod, movsx,
	// bswap, sign-extending loads and gotol.
	V4 bool
	// NoStackFetch leaves out atomic fetches (fetch-and-op, xchg,
	// cmpxchg) on the stack, which kernels with FetchPrecisionBug run
	// wrongly.
	NoStackFetch bool
	// NoTailCalls leaves out bpf_tail_call and the programs it calls.
	NoTailCalls bool
}

// Program is a generated program and the initial contents of its map
// element.
type Program struct {
	Seed  uint64
	Insns []asm.Instruction
	// Tails are the programs in slots 0, 1, ... of the program array
	// (the other slots of its ProgArraySlots are empty).
	Tails [][]asm.Instruction
	// Value is the element's contents before the run (ValueSize bytes).
	Value []byte
	// Packet is the data of the test run: an Ethernet header, then what
	// LD_ABS and LD_IND read (from Packet[EthHeaderSize:]).
	Packet []byte
}

// EthHeaderSize is the part of Packet before the data that packet loads
// address: the kernel runs socket filters with skb->data at the network
// header.
const EthHeaderSize = 14

// packetSize is the size of Packet.
const packetSize = 64

// Indexes of the programs' map table, which lddw instructions
// (BPF_PSEUDO_MAP_FD and BPF_PSEUDO_MAP_VALUE) carry as their immediate:
// the array map whose element the programs work on, and the program
// array of tail calls.
const (
	MapIndex       = 0
	ProgArrayIndex = 1
)

// ProgArraySlots is the size of the program array.
const ProgArraySlots = 4

// Helpers that generated programs call.
const (
	helperMapLookup = 1
	helperMapUpdate = 2
	helperMapDelete = 3
	helperTailCall  = 12
)

// packetReg is where LD_ABS and LD_IND want the context.
const packetReg = 6

// seedStream is the second word of the PCG state, so that seed n names
// the same program everywhere.
const seedStream = 0x9e3779b97f4a7c15

// Register roles. Each function picks two of the callee-saved registers
// r6..r9: one holds the address of the map element (vreg), the other
// counts the iterations of loops (creg, a number like any other outside
// loops). Every other register holds a number, r10 is the frame pointer.
// Pointers appear only briefly: r0 holds a lookup result, a map value
// address or a stack address for a few accesses that use other registers
// and then gets a number again; r5 brings a callee the address of its
// caller's stack area; r6 holds the context for a packet load.
const regFP = 10

// Each function uses StackSize bytes of its stack (its stack area) at
// r10+base, base a multiple of 8; deeper areas make the JIT's 32-bit
// displacements appear. The kernel allows 512 bytes over a call chain.
var (
	mainBases   = [][]int{{-64, -160, -320}, {-64, -160, -320}, {-64, -160}, {-64, -160}}
	calleeBases = [][]int{nil, {-64, -136}, {-64, -136}, {-64}}
)

// gen is the state of one generation.
type gen struct {
	rnd   *rand.Rand
	cfg   Config
	insns []asm.Instruction
	funcs int // functions besides main, numbered 1..funcs
	// calls are local calls to patch once every function's start is known.
	calls  []localCall
	called []bool // called[f]: some function calls f
	// stackArg[f]: callers of f pass the address of their stack area in
	// r5, which f reads and writes before making r5 a number.
	stackArg []bool

	// packets: the program may use LD_ABS and LD_IND, which the kernel
	// allows only in programs without local functions.
	packets bool
	// tails is the number of tail-call targets: when not zero (or in a
	// target), main may call bpf_tail_call.
	tails int

	// State of the function being generated.
	fn         int
	vreg, creg uint8 // element address, loop counter
	base       int   // stack area at r10+base
	depth      int   // nesting of ifs and loops
	inLoop     bool
	loopDepth  int  // depth of the body of the loop being generated
	loopCalled bool // the loop being generated calls the leaf
	callsLeft  int
	switched   bool // the function has its switch tree (one at most: each forks every path)
}

type localCall struct{ at, callee int }

// Generate returns the program named by seed. The same seed and config
// always give the same program and initial value.
func Generate(seed uint64, cfg Config) *Program {
	rnd := rand.New(rand.NewPCG(seed, seedStream))
	tails := rnd.IntN(3)
	if cfg.NoTailCalls {
		tails = 0
	}
	g := newGen(rnd, cfg, rnd.IntN(4), tails)
	prog := &Program{Seed: seed, Insns: g.program()}
	// Tail-call targets: programs of the same kind, without local
	// functions (so with packet loads), which may tail-call again.
	for range tails {
		prog.Tails = append(prog.Tails, newGen(rnd, cfg, 0, tails).program())
	}
	value := make([]byte, ValueSize)
	for off := 0; off < ValueSize; off += 8 {
		binary.LittleEndian.PutUint64(value[off:], g.value64())
	}
	pkt := make([]byte, packetSize)
	for i := range pkt {
		pkt[i] = byte(g.rnd.Uint32())
	}
	// An EtherType that is neither IPv4 nor IPv6, so that the kernel
	// does not look into the payload.
	pkt[12], pkt[13] = 0x88, 0xb5
	prog.Value, prog.Packet = value, pkt
	return prog
}

func newGen(rnd *rand.Rand, cfg Config, funcs, tails int) *gen {
	g := &gen{rnd: rnd, cfg: cfg, funcs: funcs, packets: funcs == 0, tails: tails}
	g.called = make([]bool, funcs+1)
	g.stackArg = make([]bool, funcs+1)
	for f := 1; f <= funcs; f++ {
		g.stackArg[f] = rnd.IntN(2) == 0
	}
	return g
}

// program emits main and the local functions.
func (g *gen) program() []asm.Instruction {
	g.mainFunc()
	starts := make([]int, g.funcs+1)
	for f := 1; f <= g.funcs; f++ {
		starts[f] = len(g.insns)
		g.function(f)
	}
	for _, c := range g.calls {
		g.insns[c.at].Imm = int32(starts[c.callee] - c.at - 1)
	}
	return g.insns
}

// mainFunc emits the entry function: look up element 0 (exit with 0 if
// it is missing, which it never is), initialise registers and stack, run
// a random body, store the registers and the stack area into the
// element, return r0.
func (g *gen) mainFunc() {
	g.beginFunc(0, mainBases[g.funcs])
	if g.packets || g.tails > 0 {
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: regFP, Src: 1, Offset: g.ctxSlot()})
	}
	g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: regFP, Offset: -4})
	g.mov(2, regFP)
	g.aluImm(asm.ClassALU64|asm.AluADD, 2, -4)
	g.mapPtr(1)
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: helperMapLookup})
	g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 0, Offset: 1})
	g.emit(asm.Instruction{Opcode: asm.OpExit})
	g.mov(g.vreg, 0)
	for r := uint8(0); r <= 9; r++ {
		if r != g.vreg {
			g.initReg(r, nil)
		}
	}
	g.initStack()
	g.block(20 + g.rnd.IntN(40))
	g.callNext()
	// The element's address is not a result: its word keeps what the
	// program left there.
	for r := uint8(0); r < SavedRegs; r++ {
		if r != g.vreg {
			g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: g.vreg, Src: r,
				Offset: int16(RegsOffset + 8*int(r))})
		}
	}
	for j := 0; j < StackSize/8; j++ {
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeDW, Dst: 1, Src: regFP,
			Offset: int16(g.base + 8*j)})
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: g.vreg, Src: 1,
			Offset: int16(StackOffset + 8*j)})
	}
	g.emit(asm.Instruction{Opcode: asm.OpExit})
}

// ctxSlot is where main spills the context pointer, below its stack
// area, when the program uses packet loads or tail calls.
func (g *gen) ctxSlot() int16 { return int16(g.base - 8) }

// function emits local function f: r1 is the element's address, r2..r5
// numbers (r5 the caller's stack area if stackArg[f]); it returns a
// number.
func (g *gen) function(f int) {
	g.beginFunc(f, calleeBases[g.funcs])
	g.mov(g.vreg, 1)
	args := []uint8{2, 3, 4, 5}
	if g.stackArg[f] {
		args = args[:3]
	}
	for _, r := range []uint8{0, 1, 6, 7, 8, 9} {
		if r != g.vreg {
			g.initReg(r, args)
		}
	}
	if g.stackArg[f] {
		g.stackOps(5, 0)
		g.initReg(5, args)
	}
	g.initStack()
	g.block(4 + g.rnd.IntN(14))
	g.callNext()
	g.emit(asm.Instruction{Opcode: asm.OpExit})
}

// beginFunc starts function f: picks its registers and stack area.
// Programs with packet loads keep r6 free for the context.
func (g *gen) beginFunc(f int, bases []int) {
	g.fn, g.depth, g.inLoop, g.callsLeft, g.switched = f, 0, false, 2, false
	roles := []uint8{6, 7, 8, 9}
	if g.packets {
		roles = roles[1:]
	}
	i := g.rnd.IntN(len(roles))
	j := (i + 1 + g.rnd.IntN(len(roles)-1)) % len(roles)
	g.vreg, g.creg = roles[i], roles[j]
	g.base = bases[g.rnd.IntN(len(bases))]
}

// Loops multiply the verifier's work by their iteration count (it walks
// every iteration), and loops reached from loops multiply it again: the
// last function (the leaf) has no loop and calls nothing, and only the
// leaf is called from inside loops, at most once per loop. Inside loops
// ifs do not nest and there are no lookups (each one forks the paths).

// callNext calls the next function if nothing has yet: the kernel refuses
// a function nobody calls (its code is unreachable), and only functions
// numbered lower than f may call f.
func (g *gen) callNext() {
	if next := g.fn + 1; next <= g.funcs && !g.called[next] {
		g.callTo(next)
	}
}

// block emits n statements.
func (g *gen) block(n int) {
	for range n {
		g.statement()
	}
}

func (g *gen) statement() {
	switch k := g.rnd.IntN(100); {
	case k < 40:
		g.alu()
	case k < 58:
		g.memory()
	case k < 66:
		g.atomic()
	case k < 76 && g.depth < 3 && (!g.inLoop || g.depth == g.loopDepth):
		g.ifElse()
	case k < 81 && !g.inLoop && g.depth < 2 && (g.fn == 0 || g.fn < g.funcs):
		if g.rnd.IntN(3) == 0 {
			g.byteLoop()
		} else {
			g.loop()
		}
	case k < 86 && g.fn < g.funcs && g.callsLeft > 0 && !(g.inLoop && g.loopCalled):
		g.callsLeft--
		callee := g.fn + 1 + g.rnd.IntN(g.funcs-g.fn)
		if g.inLoop {
			callee = g.funcs
			g.loopCalled = true
		}
		g.callTo(callee)
	case k < 88 && !g.inLoop:
		g.lookup()
	case k < 90:
		g.mapValue()
	case k < 92:
		g.stackPointer()
	case k < 94:
		g.mapUpdateDelete()
	case k < 96 && g.packets:
		g.packetLoad()
	case k < 97 && g.fn == 0 && g.tails > 0:
		g.tailCall()
	case k < 97 && !g.inLoop && g.depth == 0 && !g.switched:
		g.switched = true
		g.switchTree()
	case k < 97:
		g.lddw(g.dstReg(), g.value64())
	default:
		g.alu()
	}
}

func (g *gen) emit(ins ...asm.Instruction) { g.insns = append(g.insns, ins...) }

func (g *gen) lddw(dst uint8, v uint64) {
	pair := asm.LDDW(dst, v)
	g.emit(pair[0], pair[1])
}

// mapPtr loads the map's address (BPF_PSEUDO_MAP_FD).
func (g *gen) mapPtr(dst uint8) {
	g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: dst, Src: asm.PseudoMapFD, Imm: MapIndex}, asm.Instruction{})
}

func (g *gen) mov(dst, src uint8) {
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: dst, Src: src})
}

func (g *gen) aluImm(op, dst uint8, imm int32) {
	g.emit(asm.Instruction{Opcode: op | asm.SourceK, Dst: dst, Imm: imm})
}

// dstReg returns a register that random operations may write.
func (g *gen) dstReg() uint8 {
	for {
		r := uint8(g.rnd.IntN(10))
		if r != g.vreg && !(g.inLoop && r == g.creg) {
			return r
		}
	}
}

// srcReg returns a register holding a number.
func (g *gen) srcReg() uint8 {
	for {
		if r := uint8(g.rnd.IntN(10)); r != g.vreg {
			return r
		}
	}
}

// others returns the registers of rs that hold numbers, for initReg.
func (g *gen) others(rs ...uint8) []uint8 {
	out := rs[:0:0]
	for _, r := range rs {
		if r != g.vreg {
			out = append(out, r)
		}
	}
	return out
}

var interesting64 = []uint64{0, 1, 2, 7, 31, 32, 63, 64, 0xff, 0x80, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 0xffffffff80000000,
	math.MaxInt64, 1 << 63, math.MaxUint64, math.MaxUint64 - 1}

// value64 returns a 64-bit value, often one at an edge.
func (g *gen) value64() uint64 {
	switch g.rnd.IntN(4) {
	case 0:
		return interesting64[g.rnd.IntN(len(interesting64))]
	case 1:
		return uint64(int64(int8(g.rnd.Uint32())))
	}
	return g.rnd.Uint64()
}

var interesting32 = []int32{0, 1, -1, 2, 7, 16, 31, 32, 63, 64, 0x80, 0xff, 0x8000, 0xffff,
	math.MaxInt32, math.MinInt32, math.MinInt32 + 1}

// imm32 returns an immediate, often one at an edge.
func (g *gen) imm32() int32 {
	switch g.rnd.IntN(4) {
	case 0:
		return interesting32[g.rnd.IntN(len(interesting32))]
	case 1:
		return int32(int8(g.rnd.Uint32()))
	}
	return int32(g.rnd.Uint32())
}

// initReg gives r a number: from the data area (unknown to the verifier),
// a constant, or one of from (copied).
func (g *gen) initReg(r uint8, from []uint8) {
	k := g.rnd.IntN(6)
	if k == 5 && len(from) == 0 {
		k = 0
	}
	switch k {
	case 0, 1:
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeDW, Dst: r, Src: g.vreg,
			Offset: int16(8 * g.rnd.IntN(DataSize/8))})
	case 2:
		g.lddw(r, g.value64())
	case 3:
		g.aluImm(asm.ClassALU64|asm.AluMOV, r, g.imm32())
	case 4:
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeW, Dst: r, Src: g.vreg,
			Offset: int16(4 * g.rnd.IntN(DataSize/4))})
	case 5:
		g.mov(r, from[g.rnd.IntN(len(from))])
	}
}

// initStack writes every byte of the frame's stack area (the verifier
// refuses reads of stack it has not seen written).
func (g *gen) initStack() {
	for off := g.base; off < g.base+StackSize; off += 8 {
		switch g.rnd.IntN(4) {
		case 0:
			g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeDW, Dst: regFP, Offset: int16(off), Imm: g.imm32()})
		case 1, 2:
			g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: regFP, Src: g.srcReg(), Offset: int16(off)})
		case 3:
			g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeW, Dst: regFP, Src: g.srcReg(), Offset: int16(off)})
			g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: regFP, Offset: int16(off + 4), Imm: g.imm32()})
		}
	}
}

var aluOps = []uint8{asm.AluADD, asm.AluSUB, asm.AluMUL, asm.AluDIV, asm.AluOR, asm.AluAND,
	asm.AluLSH, asm.AluRSH, asm.AluNEG, asm.AluMOD, asm.AluXOR, asm.AluMOV, asm.AluARSH, asm.AluEND}

// alu emits one ALU64 or ALU32 operation with the fields the kernel
// accepts: immediate shifts below the width, no division by an immediate
// 0, neg without operand, byte swaps of 16, 32 or 64 bits.
func (g *gen) alu() {
	class, width := uint8(asm.ClassALU64), 64
	if g.rnd.IntN(2) == 0 {
		class, width = asm.ClassALU, 32
	}
	op := aluOps[g.rnd.IntN(len(aluOps))]
	ins := asm.Instruction{Opcode: class | op, Dst: g.dstReg()}
	useReg := g.rnd.IntN(2) == 0
	switch op {
	case asm.AluNEG:
	case asm.AluEND:
		ins.Imm = []int32{16, 32, 64}[g.rnd.IntN(3)]
		if class == asm.ClassALU64 && !g.cfg.V4 {
			ins.Opcode = asm.ClassALU | op
		}
		if ins.Opcode&0x07 == asm.ClassALU && useReg {
			ins.Opcode |= asm.SourceX // to big endian
		}
	case asm.AluLSH, asm.AluRSH, asm.AluARSH:
		if useReg {
			ins.Opcode |= asm.SourceX
			ins.Src = g.srcReg()
		} else {
			ins.Imm = int32(g.rnd.IntN(width))
		}
	case asm.AluDIV, asm.AluMOD:
		if useReg {
			ins.Opcode |= asm.SourceX
			ins.Src = g.srcReg()
		} else {
			for ins.Imm == 0 {
				ins.Imm = g.imm32()
			}
		}
		if g.cfg.V4 && g.rnd.IntN(2) == 0 {
			ins.Offset = 1 // sdiv, smod
		}
	case asm.AluMOV:
		if useReg {
			ins.Opcode |= asm.SourceX
			ins.Src = g.srcReg()
			if g.cfg.V4 && g.rnd.IntN(3) == 0 {
				sizes := []int16{8, 16, 32}
				if class == asm.ClassALU {
					sizes = sizes[:2]
				}
				ins.Offset = sizes[g.rnd.IntN(len(sizes))] // movsx
			}
		} else {
			ins.Imm = g.imm32()
		}
	default:
		if useReg {
			ins.Opcode |= asm.SourceX
			ins.Src = g.srcReg()
		} else {
			ins.Imm = g.imm32()
		}
	}
	g.emit(ins)
}

var sizes = []struct {
	code  uint8
	bytes int
}{{asm.SizeB, 1}, {asm.SizeH, 2}, {asm.SizeW, 4}, {asm.SizeDW, 8}}

// stackOffset returns an offset from r10 into the stack area for an
// access of n bytes. Stack accesses must be aligned.
func (g *gen) stackOffset(n int) int16 {
	return int16(g.base + n*g.rnd.IntN(StackSize/n))
}

// memory emits a load or a store on the stack or the map element.
func (g *gen) memory() {
	s := sizes[g.rnd.IntN(len(sizes))]
	base, off := uint8(regFP), g.stackOffset(s.bytes)
	if g.rnd.IntN(2) == 0 {
		base, off = g.vreg, int16(g.rnd.IntN(ValueSize-s.bytes+1))
	}
	g.access(base, off, s.code, s.bytes, g.rnd.IntN(3))
}

// access emits a load (kind 0), a store of an immediate (1) or of a
// register (2) of the given size at base+off.
func (g *gen) access(base uint8, off int16, size uint8, n int, kind int) {
	switch kind {
	case 0:
		mode := uint8(asm.ModeMEM)
		if g.cfg.V4 && n < 8 && g.rnd.IntN(2) == 0 {
			mode = asm.ModeMEMSX
		}
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | mode | size, Dst: g.nonPtrDst(base), Src: base, Offset: off})
	case 1:
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | size, Dst: base, Offset: off, Imm: g.imm32()})
	default:
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | size, Dst: base, Src: g.nonPtrSrc(base), Offset: off})
	}
}

// nonPtrDst and nonPtrSrc pick registers holding numbers when r0 may be
// the base pointer.
func (g *gen) nonPtrDst(base uint8) uint8 {
	for {
		if r := g.dstReg(); r != base {
			return r
		}
	}
}

func (g *gen) nonPtrSrc(base uint8) uint8 {
	for {
		if r := g.srcReg(); r != base {
			return r
		}
	}
}

var atomicOps = []int32{asm.AtomicADD, asm.AtomicOR, asm.AtomicAND, asm.AtomicXOR,
	asm.AtomicADD | asm.AtomicFetch, asm.AtomicOR | asm.AtomicFetch, asm.AtomicAND | asm.AtomicFetch,
	asm.AtomicXOR | asm.AtomicFetch, asm.AtomicXCHG, asm.AtomicCMPXCHG}

// atomic emits an atomic operation on an aligned word of the stack or of
// the map element.
func (g *gen) atomic() {
	size, n := uint8(asm.SizeW), 4
	if g.rnd.IntN(2) == 0 {
		size, n = asm.SizeDW, 8
	}
	base, off := uint8(regFP), g.stackOffset(n)
	if g.rnd.IntN(2) == 0 {
		base, off = g.vreg, int16(n*g.rnd.IntN(ValueSize/n))
	}
	g.atomicAt(base, off, size, atomicOps[g.rnd.IntN(len(atomicOps))], base == regFP)
}

// atomicAt emits atomic op at base+off; stack says base points into a
// stack.
func (g *gen) atomicAt(base uint8, off int16, size uint8, op int32, stack bool) {
	if stack && g.cfg.NoStackFetch && op&asm.AtomicFetch != 0 {
		op &^= asm.AtomicFetch
		if op == asm.AtomicXCHG&^asm.AtomicFetch || op == asm.AtomicCMPXCHG&^asm.AtomicFetch {
			op = asm.AtomicADD
		}
	}
	src := g.nonPtrSrc(base)
	if op&asm.AtomicFetch != 0 && op != asm.AtomicCMPXCHG {
		src = g.nonPtrDst(base) // written with the old value
	}
	g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeATOMIC | size, Dst: base, Src: src, Offset: off, Imm: op})
}

var jumpOps = []uint8{asm.JmpJEQ, asm.JmpJGT, asm.JmpJGE, asm.JmpJSET, asm.JmpJNE, asm.JmpJSGT,
	asm.JmpJSGE, asm.JmpJLT, asm.JmpJLE, asm.JmpJSLT, asm.JmpJSLE}

// condition returns a JMP or JMP32 conditional jump on numbers, offset 0.
func (g *gen) condition() asm.Instruction {
	class := uint8(asm.ClassJMP)
	if g.rnd.IntN(2) == 0 {
		class = asm.ClassJMP32
	}
	ins := asm.Instruction{Opcode: class | jumpOps[g.rnd.IntN(len(jumpOps))], Dst: g.srcReg()}
	if g.rnd.IntN(2) == 0 {
		ins.Opcode |= asm.SourceX
		ins.Src = g.srcReg()
	} else {
		ins.Imm = g.imm32()
	}
	return ins
}

// jumpHere points the jump at slot at to the next instruction emitted.
func (g *gen) jumpHere(at int) {
	delta := len(g.insns) - at - 1
	if g.insns[at].Opcode == asm.ClassJMP32|asm.JmpJA {
		g.insns[at].Imm = int32(delta) // gotol
	} else {
		g.insns[at].Offset = int16(delta)
	}
}

// ja emits an unconditional jump to patch later (gotol sometimes).
func (g *gen) ja() int {
	at := len(g.insns)
	op := uint8(asm.ClassJMP | asm.JmpJA)
	if g.cfg.V4 && g.rnd.IntN(2) == 0 {
		op = asm.ClassJMP32 | asm.JmpJA
	}
	g.emit(asm.Instruction{Opcode: op})
	return at
}

// jaBack emits an unconditional jump to slot target.
func (g *gen) jaBack(target int) {
	at := len(g.insns)
	g.ja()
	delta := target - at - 1
	if g.insns[at].Opcode == asm.ClassJMP32|asm.JmpJA {
		g.insns[at].Imm = int32(delta)
	} else {
		g.insns[at].Offset = int16(delta)
	}
}

// ifElse emits "if cond { block } [else { block }]". A bare ja over code
// would leave that code unreachable, which the kernel refuses, so ja only
// ends a then-block.
func (g *gen) ifElse() {
	at := len(g.insns)
	if g.rnd.IntN(4) == 0 {
		// A select, "x = cond ? x : B", which the amd64 JIT runs as a
		// cmov (jit/internal/frontend/select.go).
		j := g.condition()
		j.Offset = 1
		m := asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: g.dstReg()}
		if g.rnd.IntN(2) == 0 {
			m.Opcode = asm.ClassALU | asm.AluMOV
		}
		if g.rnd.IntN(2) == 0 {
			m.Opcode |= asm.SourceX
			m.Src = g.srcReg()
		} else {
			m.Imm = g.imm32()
		}
		g.emit(j, m)
		return
	}
	g.emit(g.condition())
	g.depth++
	g.block(1 + g.rnd.IntN(4))
	if g.rnd.IntN(2) == 0 {
		end := g.ja()
		g.jumpHere(at)
		g.block(1 + g.rnd.IntN(4))
		g.jumpHere(end)
	} else {
		g.jumpHere(at)
	}
	g.depth--
}

// loop emits a loop of a constant number of iterations counted in creg,
// in one of the shapes compilers produce.
func (g *gen) loop() {
	n := int32(1 + g.rnd.IntN(12))
	jmpClass := uint8(asm.ClassJMP)
	if g.rnd.IntN(2) == 0 {
		jmpClass = asm.ClassJMP32
	}
	g.inLoop = true
	g.depth++
	g.loopDepth, g.loopCalled = g.depth, false
	body := func() { g.block(1 + g.rnd.IntN(6)) }
	switch g.rnd.IntN(4) {
	case 0: // count down, test at the bottom
		g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, n)
		start := len(g.insns)
		body()
		g.aluImm(asm.ClassALU64|asm.AluSUB, g.creg, 1)
		g.emit(asm.Instruction{Opcode: jmpClass | asm.JmpJNE, Dst: g.creg, Offset: int16(start - len(g.insns) - 1)})
	case 1: // count up, test at the bottom
		g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, 0)
		start := len(g.insns)
		body()
		g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, 1)
		op := []uint8{asm.JmpJLT, asm.JmpJSLT, asm.JmpJNE}[g.rnd.IntN(3)]
		g.emit(asm.Instruction{Opcode: jmpClass | op, Dst: g.creg, Imm: n, Offset: int16(start - len(g.insns) - 1)})
	case 2: // count down, leave forward, loop with ja
		g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, n)
		start := len(g.insns)
		body()
		g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, -1)
		g.emit(asm.Instruction{Opcode: jmpClass | asm.JmpJEQ, Dst: g.creg, Offset: 1})
		g.jaBack(start)
	default: // test at the top
		g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, n)
		start := len(g.insns)
		g.emit(asm.Instruction{Opcode: jmpClass | asm.JmpJEQ, Dst: g.creg})
		body()
		g.aluImm(asm.ClassALU64|asm.AluSUB, g.creg, 1)
		g.jaBack(start)
		g.jumpHere(start)
	}
	g.depth--
	g.inLoop = false
}

// callTo emits a call of local function f with the element's address in
// r1, then gives r1..r5 numbers again (the kernel treats them as
// clobbered).
func (g *gen) callTo(f int) {
	g.called[f] = true
	g.mov(1, g.vreg)
	if g.stackArg[f] {
		g.mov(5, regFP)
		g.aluImm(asm.ClassALU64|asm.AluADD, 5, int32(g.base))
	}
	g.calls = append(g.calls, localCall{at: len(g.insns), callee: f})
	g.emit(asm.Instruction{Opcode: asm.OpCall, Src: asm.PseudoCall})
	g.reinitArgs(g.others(0, 6, 7, 8, 9))
}

func (g *gen) reinitArgs(from []uint8) {
	for r := uint8(1); r <= 5; r++ {
		g.initReg(r, from)
	}
}

// lookup looks up key 0 (hit) or 1 or 2 (miss) with bpf_map_lookup_elem
// and, on a hit, accesses the element through r0.
func (g *gen) lookup() {
	off := g.stackOffset(8)
	if g.rnd.IntN(4) == 0 {
		// A key from a register: 0 or 1.
		g.emit(asm.Instruction{Opcode: asm.ClassALU | asm.AluMOV | asm.SourceX, Dst: 1, Src: g.srcReg()})
		g.aluImm(asm.ClassALU|asm.AluAND, 1, 1)
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeW, Dst: regFP, Src: 1, Offset: off})
	} else {
		key := []int32{0, 0, 0, 1, 2}[g.rnd.IntN(5)]
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: regFP, Offset: off, Imm: key})
	}
	g.mov(2, regFP)
	g.aluImm(asm.ClassALU64|asm.AluADD, 2, int32(off))
	g.mapPtr(1)
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: helperMapLookup})
	g.reinitArgs(g.others(6, 7, 8, 9))
	at := len(g.insns)
	g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 0})
	g.pointerOps(0)
	g.jumpHere(at)
	g.scalarR0()
}

// mapValue loads the address of a byte of the element with lddw
// (BPF_PSEUDO_MAP_VALUE) and accesses the element through it.
func (g *gen) mapValue() {
	off := int32(g.rnd.IntN(ValueSize))
	g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: 0, Src: asm.PseudoMapValue, Imm: MapIndex},
		asm.Instruction{Imm: off})
	g.pointerOpsAt(0, int(off))
	g.scalarR0()
}

func (g *gen) pointerOps(base uint8) { g.pointerOpsAt(base, 0) }

// pointerOpsAt emits one to three accesses through base, which points
// at byte at of the element.
func (g *gen) pointerOpsAt(base uint8, at int) {
	for range 1 + g.rnd.IntN(3) {
		s := sizes[g.rnd.IntN(len(sizes))]
		if g.rnd.IntN(4) == 0 && s.bytes >= 4 {
			// An atomic: aligned, never cmpxchg (it would write r0).
			slot := s.bytes * g.rnd.IntN(ValueSize/s.bytes)
			op := atomicOps[g.rnd.IntN(len(atomicOps)-1)]
			g.atomicAt(base, int16(slot-at), s.code, op, false)
			continue
		}
		off := g.rnd.IntN(ValueSize-s.bytes+1) - at
		g.access(base, int16(off), s.code, s.bytes, g.rnd.IntN(3))
	}
}

// scalarR0 gives r0 a number again after it held a pointer.
func (g *gen) scalarR0() {
	if g.rnd.IntN(2) == 0 {
		g.mov(0, g.nonPtrSrc(0))
	} else {
		g.aluImm(asm.ClassALU64|asm.AluMOV, 0, g.imm32())
	}
}

// mapUpdateDelete calls bpf_map_update_elem with the element itself as
// the new value (a no-op copy when it succeeds), or bpf_map_delete_elem
// (always -EINVAL on an array). Keys past the end and every flag
// combination exercise the helpers' error returns and their order.
func (g *gen) mapUpdateDelete() {
	off := g.stackOffset(8)
	key := []int32{0, 0, 1, 7, -1}[g.rnd.IntN(5)]
	g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: regFP, Offset: off, Imm: key})
	g.mov(2, regFP)
	g.aluImm(asm.ClassALU64|asm.AluADD, 2, int32(off))
	helper := int32(helperMapUpdate)
	if g.rnd.IntN(4) == 0 {
		helper = helperMapDelete
	} else {
		g.mov(3, g.vreg)
		g.aluImm(asm.ClassALU64|asm.AluMOV, 4, int32(g.rnd.IntN(6))) // BPF_ANY, NOEXIST, EXIST, both, F_LOCK, 5
	}
	g.mapPtr(1)
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: helper})
	g.reinitArgs(g.others(0, 6, 7, 8, 9))
}

// packetLoad emits LD_ABS or LD_IND: r6 must hold the context, so it is
// reloaded from its spill slot and given a number again afterwards. Most
// offsets are inside the packet; the others end the run with r0 = 0.
// LD_IND offsets come from a register whose high bits may be set: the
// kernel adds in 32 bits.
func (g *gen) packetLoad() {
	s := sizes[g.rnd.IntN(3)] // B, H, W
	data := packetSize - EthHeaderSize
	g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeDW, Dst: packetReg, Src: regFP, Offset: g.ctxSlot()})
	imm := int32(g.rnd.IntN(data - s.bytes + 1))
	if g.rnd.IntN(8) == 0 {
		imm = int32(data - s.bytes + 1 + g.rnd.IntN(8)) // past the end
	}
	if g.rnd.IntN(2) == 0 {
		g.emit(asm.Instruction{Opcode: asm.ClassLD | asm.ModeABS | s.code, Imm: imm})
	} else {
		src := uint8(1 + g.rnd.IntN(5))
		base := int64(g.rnd.IntN(data))
		high := []uint64{0, 0, 1 << 32, 0xffffffff00000000, 0x8000000000000000}[g.rnd.IntN(5)]
		g.lddw(src, high|uint64(base))
		g.emit(asm.Instruction{Opcode: asm.ClassLD | asm.ModeIND | s.code, Src: src, Imm: imm - int32(base)})
	}
	from := g.others(0, 7, 8, 9)
	g.reinitArgs(from)
	if g.rnd.IntN(2) == 0 {
		g.mov(packetReg, from[g.rnd.IntN(len(from))])
	} else {
		g.aluImm(asm.ClassALU64|asm.AluMOV, packetReg, g.imm32())
	}
}

// stackPointer accesses the stack through a copy of r10 in r0 (the
// engines check such accesses differently from r10-relative ones).
func (g *gen) stackPointer() {
	at := 8 * g.rnd.IntN(StackSize/8)
	g.mov(0, regFP)
	g.aluImm(asm.ClassALU64|asm.AluADD, 0, int32(g.base+at))
	g.stackOps(0, at)
	g.scalarR0()
}

// stackOps emits one to three accesses through base, which points at
// byte at of a stack area: this function's or (in a callee) the
// caller's. Stack accesses must be aligned.
func (g *gen) stackOps(base uint8, at int) {
	for range 1 + g.rnd.IntN(3) {
		s := sizes[g.rnd.IntN(len(sizes))]
		slot := s.bytes * g.rnd.IntN(StackSize/s.bytes)
		if g.rnd.IntN(4) == 0 && s.bytes >= 4 {
			op := atomicOps[g.rnd.IntN(len(atomicOps)-1)] // not cmpxchg: it writes r0
			g.atomicAt(base, int16(slot-at), s.code, op, true)
			continue
		}
		g.access(base, int16(slot-at), s.code, s.bytes, g.rnd.IntN(3))
	}
}

// tailCall emits bpf_tail_call(ctx, prog_array, index): an index of a
// target (which runs instead of the rest of this program), of an empty
// slot or past the end (the call fails and the program goes on), or one
// with high bits set (the kernel uses the low 32). Targets tail-call
// again, so chains reach the limit of 33 tail calls.
func (g *gen) tailCall() {
	// The index first: r1 and r2 are pointers once loaded.
	switch g.rnd.IntN(4) {
	case 0:
		idx := []uint64{ProgArraySlots, ProgArraySlots + 1, 1 << 32, 1<<32 | 1, math.MaxUint64}[g.rnd.IntN(5)]
		g.lddw(3, idx)
	case 1:
		g.emit(asm.Instruction{Opcode: asm.ClassALU | asm.AluMOV | asm.SourceX, Dst: 3, Src: g.srcReg()})
		g.aluImm(asm.ClassALU|asm.AluAND, 3, ProgArraySlots-1)
	default:
		g.aluImm(asm.ClassALU64|asm.AluMOV, 3, int32(g.rnd.IntN(g.tails+1)))
	}
	g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeDW, Dst: 1, Src: regFP, Offset: g.ctxSlot()})
	g.emit(asm.Instruction{Opcode: asm.OpLDDW, Dst: 2, Src: asm.PseudoMapFD, Imm: ProgArrayIndex}, asm.Instruction{})
	g.emit(asm.Instruction{Opcode: asm.OpCall, Imm: helperTailCall})
	// r0 is unreadable after a failed tail call, r1..r5 clobbered.
	g.initReg(0, g.others(6, 7, 8, 9))
	g.reinitArgs(g.others(0, 6, 7, 8, 9))
}

// switchTree emits what clang makes of a dense C switch: a binary search
// on one register against sorted constants (JMP or JMP32 throughout, the
// register often masked into the cases' range), runs of equality tests at
// the leaves, a body per case and a default. The JIT dispatches such trees
// through a table; the kernel runs the tree.
func (g *gen) switchTree() {
	x := g.dstReg()
	class := uint8(asm.ClassJMP)
	if g.rnd.IntN(2) == 0 {
		class = asm.ClassJMP32
	}
	n := 4 + g.rnd.IntN(9)
	step := int32(1 + g.rnd.IntN(2))
	base := int32(g.rnd.IntN(48)) - 8
	if g.rnd.IntN(4) != 0 { // mostly in range, sometimes around it
		g.aluImm(asm.ClassALU64|asm.AluAND, x, 31)
		g.aluImm(asm.ClassALU64|asm.AluADD, x, base-2)
	}
	signed := base < 0 || g.rnd.IntN(2) == 0
	val := func(i int) int32 { return base + int32(i)*step }
	var toDefault, toEnd []int
	var tree func(lo, hi int)
	tree = func(lo, hi int) {
		if hi-lo <= 2 {
			for i := lo; i < hi; i++ {
				at := len(g.insns)
				g.emit(asm.Instruction{Opcode: class | asm.JmpJNE, Dst: x, Imm: val(i)})
				g.caseBody()
				toEnd = append(toEnd, g.ja())
				g.jumpHere(at)
			}
			toDefault = append(toDefault, g.ja())
			return
		}
		mid := (lo + hi) / 2
		op := uint8(asm.JmpJGE)
		if signed {
			op = asm.JmpJSGE
		}
		at := len(g.insns)
		g.emit(asm.Instruction{Opcode: class | op, Dst: x, Imm: val(mid)})
		tree(lo, mid)
		g.jumpHere(at)
		tree(mid, hi)
	}
	g.depth++
	tree(0, n)
	for _, at := range toDefault {
		g.jumpHere(at)
	}
	g.caseBody()
	for _, at := range toEnd {
		g.jumpHere(at)
	}
	g.depth--
}

// caseBody is what a case of a switch does: set a register, store into
// the data area, or compute.
func (g *gen) caseBody() {
	switch g.rnd.IntN(3) {
	case 0:
		g.aluImm(asm.ClassALU64|asm.AluMOV, g.dstReg(), g.imm32())
	case 1:
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: g.vreg,
			Offset: int16(4 * g.rnd.IntN(DataSize/4)), Imm: g.imm32()})
	default:
		g.alu()
	}
}

// byteLoop emits a copy, compare, find or fill loop over the data area as
// clang emits them for memcpy, memcmp/strcmp, strlen/memchr and memset
// style code: pointers into the element advanced by the unit (1, 2, 4 or
// 8 bytes) each iteration, a count in creg, and for compare and find an
// early exit. The pointers hold numbers again afterwards.
func (g *gen) byteLoop() {
	switch g.rnd.IntN(6) {
	case 0, 1:
		g.copyLoop()
		return
	case 2:
		g.compareLoop()
		return
	case 3:
		if g.rnd.IntN(2) == 0 {
			g.findLoop()
			return
		}
	}
	sz := sizes[g.rnd.IntN(len(sizes))]
	unit := sz.bytes
	count := 1 + g.rnd.IntN(16)
	span := count * unit
	off := func() int32 { return int32(unit * g.rnd.IntN((DataSize-span)/unit+1)) }
	regs := g.scratch(3)
	p1, p2, t := regs[0], regs[1], regs[2]
	g.inLoop = true
	g.depth++
	g.loopDepth, g.loopCalled = g.depth, false
	g.mov(p1, g.vreg)
	g.aluImm(asm.ClassALU64|asm.AluADD, p1, off())
	g.mov(p2, g.vreg)
	g.aluImm(asm.ClassALU64|asm.AluADD, p2, off())
	g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, int32(count))
	kind := g.rnd.IntN(4)
	var exits []int
	start := len(g.insns)
	load := func(dst, src uint8) {
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sz.code, Dst: dst, Src: src})
	}
	switch kind {
	case 0: // copy
		load(t, p1)
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz.code, Dst: p2, Src: t})
	case 1: // compare: leave at the first difference, t the difference
		load(t, p1)
		r := g.scratchOther(p1, p2, t)
		load(r, p2)
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluSUB | asm.SourceX, Dst: t, Src: r})
		exits = append(exits, len(g.insns))
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: t})
	case 2: // find: leave at the first unit equal to a constant
		load(t, p1)
		exits = append(exits, len(g.insns))
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: t, Imm: int32(g.rnd.IntN(4))})
	default: // fill
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sz.code, Dst: p2, Imm: int32(int8(g.rnd.Uint32()))})
	}
	g.aluImm(asm.ClassALU64|asm.AluADD, p1, int32(unit))
	g.aluImm(asm.ClassALU64|asm.AluADD, p2, int32(unit))
	g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, -1)
	g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: g.creg, Offset: int16(start - len(g.insns) - 1)})
	for _, at := range exits {
		g.jumpHere(at)
	}
	g.depth--
	g.inLoop = false
	// Where the loop stopped is in creg; the pointers hold numbers again.
	g.initReg(p1, nil)
	g.initReg(p2, nil)
}

// copyLoop emits a copy over the data area as clang compiles memcpy (or
// a fill, as it compiles memset): the
// counter counts bytes up from 0 and indexes both spans, which may
// overlap, and the loop stays with jne or jlt, or leaves with jeq and
// goes back with ja. The amd64 JIT copies such loops wide
// (compile_idiom.go) when the spans are apart.
func (g *gen) copyLoop() {
	sz := sizes[g.rnd.IntN(len(sizes))]
	unit := sz.bytes
	count := 1 + g.rnd.IntN(DataSize/2/unit)
	span := count * unit
	off := func() int16 { return int16(g.rnd.IntN(DataSize - span + 1)) }
	regs := g.scratch(3)
	t, v, q := regs[0], regs[1], regs[2]
	g.inLoop = true
	g.depth++
	g.loopDepth, g.loopCalled = g.depth, false
	g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, 0)
	start := len(g.insns)
	src, dst := off(), off()
	g.mov(t, g.vreg)
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: t, Src: g.creg})
	kind := g.rnd.IntN(4)
	if kind != 1 {
		g.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sz.code, Dst: v, Src: t, Offset: src})
	}
	switch kind {
	case 0:
		g.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz.code, Dst: t, Src: v, Offset: dst})
	case 1: // a fill, as clang compiles memset
		g.emit(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sz.code, Dst: t, Offset: dst, Imm: g.imm32()})
	default:
		g.mov(q, g.vreg)
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: q, Src: g.creg},
			asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sz.code, Dst: q, Src: v, Offset: dst})
	}
	g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, int32(unit))
	switch g.rnd.IntN(3) {
	case 0:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: g.creg, Imm: int32(span), Offset: int16(start - len(g.insns) - 1)})
	case 1:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJLT, Dst: g.creg, Imm: int32(span), Offset: int16(start - len(g.insns) - 1)})
	default:
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: g.creg, Imm: int32(span), Offset: 1})
		g.jaBack(start)
	}
	g.depth--
	g.inLoop = false
	// The temporaries hold addresses into the element: numbers again.
	g.initReg(t, nil)
	g.initReg(q, nil)
}

// compareLoop emits a byte comparison over the data area as clang
// compiles strcmp (rotated: entered by a jump to its loads, the zero and
// bound tests in a second block) or memcmp (one block): the counter
// counts up from 0 and indexes both strings, which are sometimes the
// same. The amd64 JIT compares such loops 16 bytes at a time
// (compile_idiom_cmp.go).
func (g *gen) compareLoop() {
	span := 2 + g.rnd.IntN(DataSize/2-1)
	// Elements of 1 byte mostly, else 2, 4 or 8: the span, the offsets
	// and the counter in bytes, multiples of the size.
	size, code := 1, uint8(asm.SizeB)
	if k := g.rnd.IntN(8); k >= 5 {
		size, code = []int{2, 4, 8}[k-5], []uint8{asm.SizeH, asm.SizeW, asm.SizeDW}[k-5]
		span = max(span/size, 2) * size
	}
	off := func() int16 { return int16(g.rnd.IntN((DataSize-span)/size+1) * size) }
	src, dst := off(), off()
	if g.rnd.IntN(2) == 0 {
		dst = src
	}
	regs := g.scratch(4)
	t, v, w, q := regs[0], regs[1], regs[2], regs[3]
	g.inLoop = true
	g.depth++
	g.loopDepth, g.loopCalled = g.depth, false
	zero := g.rnd.IntN(3) != 0
	cls := func() uint8 {
		if g.rnd.IntN(2) == 0 {
			return asm.ClassJMP32
		}
		return asm.ClassJMP
	}
	loads := func(ctr uint8) {
		g.mov(t, g.vreg)
		g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: t, Src: ctr},
			asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | code, Dst: v, Src: t, Offset: src},
			asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | code, Dst: w, Src: t, Offset: dst})
	}
	var exits []int
	g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, 0)
	if g.rnd.IntN(2) == 0 {
		// strcmp: ja body; test: [zero test]; creg = q+1; jne q, span-1,
		// body; ja out; body: q = creg; loads; jeq v, w, test.
		entry := len(g.insns)
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
		test := len(g.insns)
		if zero {
			exits = append(exits, len(g.insns))
			g.emit(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: v})
		}
		g.mov(g.creg, q)
		g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, int32(size))
		bound := len(g.insns)
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: q, Imm: int32(span - size)})
		exits = append(exits, len(g.insns))
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
		g.jumpHere(entry)
		g.jumpHere(bound)
		g.mov(q, g.creg)
		loads(q)
		g.emit(asm.Instruction{Opcode: cls() | asm.JmpJEQ | asm.SourceX, Dst: v, Src: w, Offset: int16(test - len(g.insns) - 1)})
	} else {
		start := len(g.insns)
		loads(g.creg)
		exits = append(exits, len(g.insns))
		g.emit(asm.Instruction{Opcode: cls() | asm.JmpJNE | asm.SourceX, Dst: v, Src: w})
		if zero {
			exits = append(exits, len(g.insns))
			g.emit(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: w})
		}
		g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, int32(size))
		op := uint8(asm.JmpJLT)
		if g.rnd.IntN(2) == 0 {
			op = asm.JmpJNE
		}
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | op, Dst: g.creg, Imm: int32(span), Offset: int16(start - len(g.insns) - 1)})
	}
	for _, at := range exits {
		g.jumpHere(at)
	}
	g.depth--
	g.inLoop = false
	// t holds an address into the element: a number again. q may be
	// unset (a rotated loop's exit before it is written is impossible,
	// but keep the verifier's view simple).
	g.initReg(t, nil)
	g.initReg(q, nil)
}

// findLoop emits a byte search over the data area as clang compiles
// strlen, memchr or "find c or the end" (jeq to the needles, then jeq
// bound out and ja back, or a temporary written before each exit and jne
// bound back): the counter counts up from 0 and indexes the string; the
// needles are immediates or a register the loop does not write. The
// amd64 JIT scans such loops 16 bytes at a time (compile_idiom_find.go).
func (g *gen) findLoop() {
	span := 2 + g.rnd.IntN(DataSize/2-1)
	src := int16(g.rnd.IntN(DataSize - span + 1))
	regs := g.scratch(4)
	t, v, nr, tmp := regs[0], regs[1], regs[2], regs[3]
	cls := func() uint8 {
		if g.rnd.IntN(2) == 0 {
			return asm.ClassJMP32
		}
		return asm.ClassJMP
	}
	var exits []int
	needle := func() {
		exits = append(exits, len(g.insns))
		switch g.rnd.IntN(3) {
		case 0:
			g.emit(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: v})
		case 1:
			g.emit(asm.Instruction{Opcode: cls() | asm.JmpJEQ, Dst: v, Imm: int32(g.rnd.IntN(256))})
		default:
			g.emit(asm.Instruction{Opcode: cls() | asm.JmpJEQ | asm.SourceX, Dst: v, Src: nr})
		}
	}
	g.aluImm(asm.ClassALU64|asm.AluMOV, nr, int32(g.rnd.IntN(256)+256*g.rnd.IntN(2)))
	g.aluImm(asm.ClassALU64|asm.AluMOV, tmp, 0)
	g.inLoop = true
	g.depth++
	g.loopDepth, g.loopCalled = g.depth, false
	g.aluImm(asm.ClassALU64|asm.AluMOV, g.creg, 0)
	start := len(g.insns)
	g.mov(t, g.vreg)
	g.emit(asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD | asm.SourceX, Dst: t, Src: g.creg},
		asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeB, Dst: v, Src: t, Offset: src})
	slenp := g.rnd.IntN(2) == 0
	if slenp {
		g.mov(tmp, g.creg)
	}
	needle()
	if g.rnd.IntN(2) == 0 {
		needle()
	}
	if slenp {
		g.aluImm(asm.ClassALU64|asm.AluMOV, tmp, int32(span))
	}
	g.aluImm(asm.ClassALU64|asm.AluADD, g.creg, 1)
	if slenp {
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: g.creg, Imm: int32(span), Offset: int16(start - len(g.insns) - 1)})
	} else {
		exits = append(exits, len(g.insns))
		g.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: g.creg, Imm: int32(span)})
		g.jaBack(start)
	}
	for _, at := range exits {
		g.jumpHere(at)
	}
	g.depth--
	g.inLoop = false
	// t holds an address into the element: a number again.
	g.initReg(t, nil)
}

// scratch returns n distinct registers holding numbers, none of them
// vreg or creg.
func (g *gen) scratch(n int) []uint8 {
	var out []uint8
	for len(out) < n {
		r := uint8(g.rnd.IntN(10))
		if r != g.vreg && r != g.creg && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// scratchOther returns a register holding a number that is none of rs,
// vreg or creg.
func (g *gen) scratchOther(rs ...uint8) uint8 {
	for {
		r := uint8(g.rnd.IntN(10))
		if r != g.vreg && r != g.creg && !slices.Contains(rs, r) {
			return r
		}
	}
}
