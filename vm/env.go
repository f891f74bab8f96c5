package vm

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
)

// region is memory a program may access in checked mode: [lo, hi).
type region struct {
	lo, hi   uint64
	writable bool
	// keep holds the memory's Go object so the GC cannot free it while a run
	// can still reach it through an address in a register.
	keep unsafe.Pointer
}

func (r *region) contains(addr, size uint64) bool {
	return addr >= r.lo && addr <= r.hi && size <= r.hi-addr
}

// Env is the state of one program run: its arguments, its stack, the memory
// regions it may access, and the channel through which helpers talk back to
// the engine. An Env is not safe for concurrent use; give each goroutine its
// own (Program.Run does so from a pool) and reuse it across runs to avoid
// allocation.
type Env struct {
	// st is the part of the run state that engines share and generated
	// code reads at fixed offsets (engine.Env): the arguments, the stack,
	// the regions the run may access besides the stack (the context,
	// memory the embedder registered, memory helpers returned), the
	// packet, the budget, another engine's run state, what the run
	// executed, the budget while a helper runs (see Charge) and the
	// status helpers set. It is the first field: engines convert the
	// *Env.
	st engine.Env[region]

	// Set by helpers, read by the engine after each helper call.
	stopR0    uint64
	err       error
	tailProg  *Program
	tailCalls int

	prog *Program // the program running now (tail calls change it)
	// regs has a slot for every uint8 so that indexing by an instruction's
	// register field needs neither a mask nor a bounds check.
	regs  [256]uint64
	depth int
	base  int // the depth at which exit ends the run (callbacks run deeper)
	// The run's limits besides the budget (see timelimit.go): its
	// context, its time limit (0: the program's) and when its first
	// slice of the budget ended (0: not yet).
	ctx        context.Context
	timeout    time.Duration
	sliceStart int64
	sliceLeft  uint64 // what the interpreter's current slice has left
	helperPC   int    // the call instruction of the helper running now
	frames     [MaxCallDepth]frame
	cpu        int

	// What interpret reports when it stops with whyFault.
	faultAddr uint64
	faultSize int
	faultErr  error

	// held are the ring buffer records the run reserved and has not
	// committed (Hold).
	held []heldRecord
	// regionIndex finds the regions a run added by address, once it
	// added many (AddRegion).
	regionIndex map[uint64]int32

	// Data is free for the embedder and its helpers (for example the
	// tracepoint that fired); the engines never look at it.
	Data any
}

// frame is the caller state a bpf-to-bpf call saves.
type frame struct {
	retPC  int32
	prog   *Program  // the caller, which a tail call in the callee may not be
	callee [4]uint64 // r6..r9
}

const (
	statusStop = 1 << iota
	statusFail
	statusTailCall
	statusOverdrawn // a helper charged more than the budget left (Charge)
)

var nextCPU atomic.Uint32

// NewEnv returns an empty Env with its own stack.
func NewEnv() *Env {
	e := &Env{}
	e.st.Stack = unsafe.Pointer(new([StackSize]byte))
	e.st.StackLo = uint64(uintptr(e.st.Stack))
	e.cpu = int(nextCPU.Add(1)-1) % runtime.NumCPU()
	return e
}

// Reset forgets the arguments, regions, packet, budget and Data of the last
// run so that the Env can be reused. It keeps allocated capacity.
func (e *Env) Reset() {
	e.endRegions()
	e.st.Args = [5]uint64{}
	clear(e.st.Regions)
	e.st.Regions = e.st.Regions[:0]
	e.st.Packet = nil
	e.st.Budget = 0
	e.ctx, e.timeout = nil, 0
	e.Data = nil
	e.clearStatus()
}

func (e *Env) clearStatus() {
	e.st.Status, e.stopR0, e.err, e.tailProg, e.tailCalls = 0, 0, nil, nil, 0
}

// SetContext makes mem the program's context: r1 = its address, r2 = its
// length, and the run may read and write it.
func (e *Env) SetContext(mem []byte) {
	if len(mem) == 0 {
		e.st.Args[0], e.st.Args[1] = 0, 0
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(mem))
	e.AddRegion(p, uintptr(len(mem)), true)
	e.st.Args[0], e.st.Args[1] = uint64(uintptr(p)), uint64(len(mem))
}

// SetContextPointer makes the size bytes at p the program's context (r1 = p,
// r2 = size). p must point to memory that stays valid for the run, such as a
// Go object the caller keeps alive.
func (e *Env) SetContextPointer(p unsafe.Pointer, size uintptr, writable bool) {
	e.AddRegion(p, size, writable)
	e.st.Args[0], e.st.Args[1] = uint64(uintptr(p)), uint64(size)
}

// SetArg sets argument register r(i+1), i in 0..4, overriding what
// SetContext put there.
func (e *Env) SetArg(i int, v uint64) { e.st.Args[i] = v }

// SetPacket sets the packet that the legacy LD_ABS/LD_IND loads read. The
// packet is read-only to those instructions and is not a region.
func (e *Env) SetPacket(pkt []byte) { e.st.Packet = pkt }

// SetBudget limits this run to n instructions (0: the program's budget).
func (e *Env) SetBudget(n uint64) { e.st.Budget = n }

// AddRegion lets the run access the size bytes at p. Helpers call it for
// memory they hand to the program (map values, ring buffer records). The
// memory must stay valid until the run ends; the Env keeps p reachable for
// the GC until Reset.
func (e *Env) AddRegion(p unsafe.Pointer, size uintptr, writable bool) {
	lo := uint64(uintptr(p))
	hi := lo + uint64(size)
	if size == 0 || hi < lo {
		return
	}
	// Helpers often hand out the same memory again (a lookup in a loop):
	// do not grow the list when one of the newest regions covers it.
	n := len(e.st.Regions)
	for i := n - 1; i >= max(0, n-4); i-- {
		r := &e.st.Regions[i]
		if r.contains(lo, uint64(size)) && (r.writable || !writable) {
			return
		}
	}
	// A loop over many elements hands out the same values again beyond
	// the newest few: past regionIndexed regions added by the run, an
	// index by address finds them, so that the list grows with the
	// distinct values a run was given, not with its calls (which a loop
	// of lookups would turn into gigabytes). Entries are checked when
	// used, so removals and truncations need not update the index.
	if n-e.st.Fixed >= regionIndexed {
		if e.regionIndex == nil {
			e.regionIndex = make(map[uint64]int32)
		}
		if i, ok := e.regionIndex[lo]; ok && int(i) < n {
			if r := &e.st.Regions[i]; r.lo == lo && r.contains(lo, uint64(size)) && (r.writable || !writable) {
				return
			}
		}
		e.regionIndex[lo] = int32(n)
	}
	e.st.Regions = append(e.st.Regions, region{lo: lo, hi: hi, writable: writable, keep: p})
}

// regionIndexed is the number of regions a run adds before AddRegion
// indexes them.
const regionIndexed = 32

// endRegions ends a run's use of what it was handed: the records it still
// holds are discarded and the index of its regions emptied.
func (e *Env) endRegions() {
	if len(e.held) != 0 {
		e.discardHeld()
	}
	if len(e.regionIndex) != 0 {
		clear(e.regionIndex)
	}
}

// AddBytes lets the run access b.
func (e *Env) AddBytes(b []byte, writable bool) {
	if len(b) > 0 {
		e.AddRegion(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)), writable)
	}
}

// allowed reports whether the run may access size bytes at addr.
func (e *Env) allowed(addr, size uint64, write bool) bool {
	if size <= StackSize && addr-e.st.StackLo <= StackSize-size {
		return true
	}
	return e.inRegions(addr, size, write)
}

// inRegions reports whether a region other than the stack allows the
// access, for helpers. Exec appends the program's static regions to the
// Env's for the duration of a run, so one list covers all.
func (e *Env) inRegions(addr, size uint64, write bool) bool {
	// The order of the interpreter's inline checks: the last hit, the
	// regions the run started with, then helpers' newest first.
	in := func(i int) bool {
		r := &e.st.Regions[i]
		return addr >= r.lo && addr <= r.hi && size <= r.hi-addr && (r.writable || !write)
	}
	if h := int(e.st.Hit); h < len(e.st.Regions) && in(h) {
		return true
	}
	fixed := min(e.st.Fixed, len(e.st.Regions))
	for i := range fixed {
		if in(i) {
			return true
		}
	}
	for i := len(e.st.Regions) - 1; i >= fixed; i-- {
		if in(i) {
			return true
		}
	}
	return false
}

// Pointer checks that the program may access size bytes at addr and returns
// them as a pointer. Helpers use it for every pointer argument.
func (e *Env) Pointer(addr, size uint64, write bool) (unsafe.Pointer, bool) {
	if size == 0 || !e.allowed(addr, size, write) {
		return nil, false
	}
	return hostPointer(addr), true
}

// Bytes is Pointer as a byte slice.
func (e *Env) Bytes(addr, size uint64, write bool) ([]byte, bool) {
	p, ok := e.Pointer(addr, size, write)
	if !ok {
		return nil, false
	}
	return unsafe.Slice((*byte)(p), size), true
}

// Stop ends the run after the current helper returns, with r0 = r0.
func (e *Env) Stop(r0 uint64) {
	e.st.Status |= statusStop
	e.stopR0 = r0
}

// Fail ends the run after the current helper returns, with err.
func (e *Env) Fail(err error) {
	e.st.Status |= statusFail
	e.err = err
}

// TailCall makes the run continue in p, from its first instruction, with
// the current context in r1, when the current helper returns. It is what
// bpf_tail_call does when its target exists.
//
// It returns false, and changes nothing, once the run has made MaxTailCalls
// tail calls; bpf_tail_call then fails and the caller continues, as in Linux.
func (e *Env) TailCall(p *Program) bool {
	if p == nil || e.tailCalls >= MaxTailCalls {
		return false
	}
	e.tailCalls++
	e.st.Status |= statusTailCall
	e.tailProg = p
	return true
}

// Executed returns how many instructions the last run executed (callbacks
// included), as charged to its budget.
func (e *Env) Executed() uint64 { return e.st.Executed }

// Program returns the program running now.
func (e *Env) Program() *Program { return e.prog }

// CPU returns the CPU slot of this Env, for per-CPU maps and
// bpf_get_smp_processor_id. It is fixed for the Env's life; concurrent Envs
// may share a slot when there are more of them than CPUs.
func (e *Env) CPU() int { return e.cpu }

// hostPointer turns a program address into a Go pointer. Program addresses
// are host addresses that an earlier check proved to lie in a region.
func hostPointer(addr uint64) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}

// EnvPool hands out Envs for single runs, so that a program run from many
// goroutines allocates nothing in the steady state. It is a sync.Pool
// (per-P caches: measured faster than one atomically swapped spare Env, and
// it scales). The zero value is ready to use.
type EnvPool struct{ pool sync.Pool }

// Get returns an Env with nothing set.
func (p *EnvPool) Get() *Env {
	if e, ok := p.pool.Get().(*Env); ok {
		return e
	}
	return NewEnv()
}

// Put resets e and returns it to the pool.
func (p *EnvPool) Put(e *Env) {
	e.Reset()
	p.pool.Put(e)
}

// Packet returns the packet of LD_ABS/LD_IND loads (SetPacket).
func (e *Env) Packet() []byte { return e.st.Packet }

// HelperStatus reports whether the run ends or goes on in another program
// when the current helper returns: it, or a callback it ran with
// CallFunction, stopped the run, failed it or made a tail call. A helper
// that runs callbacks stops running them then.
func (e *Env) HelperStatus() bool { return e.st.Status != 0 }
