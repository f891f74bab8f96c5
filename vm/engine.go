package vm

import (
	"unsafe"

	"github.com/uebpf/uebpf/maps"
)

// Engine support: what an engine other than the interpreter (package jit)
// needs from a Program and an Env. The interpreter does not use these.

// Constant returns the 64-bit value that the lddw at slot i loads, with
// map references resolved. Slot i must be the first slot of an lddw.
func (p *Program) Constant(i int) uint64 { return p.code[i].imm }

// HelperAt returns the helper that the call instruction at slot i calls.
// Slot i must be a helper call (not a local call or callx).
func (p *Program) HelperAt(i int) HelperFunc { return p.funcs[p.code[i].imm] }

// BeginRun prepares e for a run of p by an engine, as Exec does for the
// interpreter: it makes p the running program, clears the helper status,
// adds p's static regions to the run's, and returns the run's budget and
// a mark to pass to EndRun.
func (e *Env) BeginRun(p *Program) (budget uint64, mark int) {
	e.prog = p
	if e.status != 0 || e.tailCalls != 0 { // else nothing to clear
		e.clearStatus()
	}
	budget = e.budget
	if budget == 0 {
		budget = p.budget
	}
	e.sliceStart = 0
	mark = len(e.regions)
	if len(p.regions) != 0 {
		e.regions = append(e.regions, p.regions...)
	}
	return budget, mark
}

// EndRun undoes what BeginRun added to e's regions, and discards the
// records the run still holds (Hold).
func (e *Env) EndRun(mark int) {
	if len(e.regions) > mark {
		clear(e.regions[mark:])
		e.regions = e.regions[:mark]
	}
	e.endRegions()
}

// Args returns r1..r5 of the next run.
func (e *Env) Args() *[5]uint64 { return &e.args }

// StackBase returns the address of the lowest byte of the run's stack of
// StackSize bytes; r10 starts at StackBase() + StackSize.
func (e *Env) StackBase() uint64 { return e.stackLo }

// Packet returns the packet of LD_ABS/LD_IND loads.
func (e *Env) Packet() []byte { return e.packet }

// SetProgram records p as the running program, for an engine that returns
// from a bpf-to-bpf call into a caller after the callee made a tail call.
func (e *Env) SetProgram(p *Program) { e.prog = p }

// HelperStatus reports whether the last helper call stopped the run,
// failed it or asked for a tail call. It is cheap: engines call
// HelperResult only when it returns true.
func (e *Env) HelperStatus() bool { return e.status != 0 }

// HelperResult tells an engine what to do after a helper called at slot pc
// set a status: continue in next (a tail call, already made the running
// program), or end the run with r0 and err.
func (e *Env) HelperResult(pc int) (next *Program, r0 uint64, err error) {
	if e.status&(statusTailCall|statusOverdrawn) != statusTailCall {
		r0, err = e.finish(pc)
		return nil, r0, err
	}
	e.status &^= statusTailCall
	e.prog = e.tailProg
	return e.prog, 0, nil
}

// Layout of the region list that Regions exposes, so that generated
// code can walk them: each entry is RegionSize bytes with the first
// address at RegionLoOffset, the end (exclusive) at RegionHiOffset, and a
// writable byte (0 or 1) at RegionWritableOffset.
const (
	RegionSize           = unsafe.Sizeof(region{})
	RegionLoOffset       = unsafe.Offsetof(region{}.lo)
	RegionHiOffset       = unsafe.Offsetof(region{}.hi)
	RegionWritableOffset = unsafe.Offsetof(region{}.writable)
)

// Regions returns the first entry and the length of the run's region
// list, which checked accesses outside the stack are matched against. The
// list stays valid until a helper runs (AddRegion may move it) or the Env
// is reset; an engine reads it again after every helper call.
func (e *Env) Regions() (first unsafe.Pointer, n int) {
	return unsafe.Pointer(unsafe.SliceData(e.regions)), len(e.regions)
}

// Budget returns the budget SetBudget set (0: the program's).
func (e *Env) Budget() uint64 { return e.budget }

// StaticRegions returns how many regions BeginRun adds to a run of p (its
// global data): an engine whose runs of p check memory against a region
// list of its own needs them when this is not 0.
func (p *Program) StaticRegions() int { return len(p.regions) }

// SetExecuted records how many instructions a run executed, for Executed.
func (e *Env) SetExecuted(n uint64) { e.executed = n }

// ArrayMapInfo describes an array map that an engine may index directly
// for calls to an ArrayLookup helper: the address of its memory, the
// distance between elements and the number of elements. Base is 0 for a
// map the engine must leave to the helper.
type ArrayMapInfo struct {
	Base, Stride, N uint64
}

// MapEntrySize is the size of an entry of a program's map table: a map
// pointer (an lddw of a map) is the address of one such entry.
const MapEntrySize = mapEntrySize

// ArrayMaps returns the address of p's map table and, for each of its
// entries, what an inline lookup needs (see Helper.ArrayLookup). The
// memory of these arrays is a static region of p.
func (p *Program) ArrayMaps() (tableBase uint64, arrays []ArrayMapInfo) {
	tableBase = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p.maps))))
	arrays = make([]ArrayMapInfo, len(p.arrays))
	for i, a := range p.arrays {
		arrays[i] = ArrayMapInfo{Base: a.base, Stride: a.stride, N: a.n}
	}
	return tableBase, arrays
}

// HashMap returns what an engine needs to answer hash lookups and updates
// on Maps()[i] itself: the map's direct access, its key and value sizes,
// and whether programs may write it. ok is false for a map that is not a
// hash map of package maps.
func (p *Program) HashMap(i int) (d maps.DirectHash, keySize, valueSize int, writable, ok bool) {
	if i < 0 || i >= len(p.hashes) || p.hashes[i].keySize == 0 {
		return d, 0, 0, false, false
	}
	h := &p.hashes[i]
	return h.direct, int(h.keySize), int(h.valueSize), h.writable, true
}

// EngineStateWords is the size, in 8-byte words, of the scratch space each
// Env keeps for another engine's run state.
const EngineStateWords = 40

// EngineState returns the Env's scratch space of EngineStateWords words
// for an engine's run state. It holds no Go pointers (the GC does not scan
// it) and lives as long as the Env; its address moves only if the Env does.
// The interpreter never touches it.
func (e *Env) EngineState() unsafe.Pointer { return unsafe.Pointer(&e.engine) }

// Offsets of Env fields relative to EngineState, so that generated code
// holding the state's address reads them directly instead of the engine
// copying them in for every run: the arguments r1..r5 (five words), the
// stack's lowest address, and the data pointer and length of the region
// list (see Regions) and of the packet.
const (
	EngineArgsOffset       = int32(unsafe.Offsetof(Env{}.args)) - engineOffset
	EngineStackLoOffset    = int32(unsafe.Offsetof(Env{}.stackLo)) - engineOffset
	EngineRegionsOffset    = int32(unsafe.Offsetof(Env{}.regions)) - engineOffset
	EngineRegionsLenOffset = EngineRegionsOffset + 8
	EnginePacketOffset     = int32(unsafe.Offsetof(Env{}.packet)) - engineOffset
	EnginePacketLenOffset  = EnginePacketOffset + 8
	// EngineExecutedOffset locates what Executed returns, for an engine
	// whose run loop is assembly.
	EngineExecutedOffset = int32(unsafe.Offsetof(Env{}.executed)) - engineOffset

	engineOffset = int32(unsafe.Offsetof(Env{}.engine))
)

// SetOnlyContext makes the size bytes at p the run's context (r1 = p, r2 =
// size) and its only region, replacing the regions of an earlier run, in
// place. It is for an engine that keeps an Env between runs of programs
// that call no helpers, where a run changes nothing else that Reset would
// clear: the arguments r3..r5, the packet, the budget, Data and the
// helper status stay as the first run found them (Reset, the zero Env).
func (e *Env) SetOnlyContext(p unsafe.Pointer, size uintptr, writable bool) {
	lo := uint64(uintptr(p))
	e.args[0], e.args[1] = lo, uint64(size)
	if size == 0 || lo+uint64(size) < lo {
		clear(e.regions)
		e.regions = e.regions[:0]
		return
	}
	if cap(e.regions) == 0 {
		e.regions = make([]region, 0, 4)
	}
	e.regions = append(e.regions[:0], region{lo: lo, hi: lo + uint64(size), writable: writable, keep: p})
}

// SliceEnded is what an engine calls each time a run has used a slice of
// its budget: it returns the cause that ends the run (the run's context's
// error or ErrTimeout), if any. It is a call into Go that is not inlined,
// so the goroutine stops here when the scheduler or the garbage collector
// asked it to: an engine whose code Go cannot preempt comes back at least
// once per slice.
//
//go:noinline
func (e *Env) SliceEnded() error { return e.sliceEnded() }

// SetHelperBudget tells the helper about to run how much budget the run
// has left, which Env.Charge takes from; HelperBudget returns what is
// left after it. The interpreter does this itself.
func (e *Env) SetHelperBudget(n uint64) { e.budgetLeft = n }

// HelperBudget returns the run's budget after the helper's charges (see
// SetHelperBudget).
func (e *Env) HelperBudget() uint64 { return e.budgetLeft }
