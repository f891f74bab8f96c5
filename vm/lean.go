package vm

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Lean runs. A program whose runs call no Go code (no helper calls; callx
// only with no helpers to reach) changes nothing of an Env but its
// registers, frames, stack, regions and what the interpreter records, so
// Run and RunPointer give it a short path: no Reset, no deferred recover,
// no sync.Pool. Its Envs come from a small cache per P, which a run uses
// pinned to its P (procPin: it cannot be preempted or rescheduled, so no
// other goroutine uses that P's cache meanwhile) for at most leanChunk
// units of budget; most short runs end within that chunk. A longer run
// takes its Env out of the cache, unpins and goes on as any run does.
//
// Each cache entry is tagged with the id of the program whose Env it
// holds: the stack is not cleared between runs, and a run may see only
// what an earlier run of the same program left there, as with the
// per-program pools. The cache keeps at most leanWays Envs per P for all
// programs together, drops those no run took between two garbage
// collections (so that idle or collected programs' Envs are freed, as
// sync.Pool's are), and holds no reference to a program. An idle P's
// cache keeps its Envs until it is used again. Programs beyond leanWays
// on one P take their Envs from their own pool.

// leanWays is the number of Envs each P's cache holds.
const leanWays = 4

// leanChunk is the most budget a run interprets pinned to its P: a
// goroutine that is pinned cannot be preempted, so this bounds how long a
// stop of the world waits for it (a few microseconds).
const leanChunk = 4096

// leanCache is one P's cache, padded so that Ps do not share cache lines.
type leanCache struct {
	epoch uint32 // the gcEpoch the cache last saw
	used  uint8  // the ways runs took since then
	ids   [leanWays]uint64
	envs  [leanWays]*Env
	_     [128 - 8 - 8*2*leanWays]byte
}

var (
	// leanCaches has an entry for each P up to the number of CPUs at
	// start; runs on Ps beyond (GOMAXPROCS raised past it) use the pools.
	leanCaches = make([]leanCache, runtime.NumCPU())
	// gcEpoch counts garbage collections (see watchGC).
	gcEpoch atomic.Uint32
	// lastProgramID numbers programs for the caches' tags.
	lastProgramID atomic.Uint64
)

func init() { watchGC() }

// watchGC makes the next garbage collection increment gcEpoch and call
// watchGC again: a cleanup of an object nothing references runs after
// the cycle that finds it unreachable.
func watchGC() {
	runtime.AddCleanup(new(gcSentinel), func(struct{}) {
		gcEpoch.Add(1)
		watchGC()
	}, struct{}{})
}

// gcSentinel is big enough not to share a tiny allocation block, whose
// objects may be freed late.
type gcSentinel struct{ _ [16]byte }

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// run is Run and RunPointer: the context is the size bytes at ctx (r1 =
// ctx, or 0 for an empty one unless pointer says it came from
// RunPointer; r2 = size). For a lean program it is the run's only region
// besides the program's static ones, and what Exec, Env.run and drive do
// is inlined here, down to the first stop of interpret, which is usually
// the exit.
func (p *Program) run(ctx unsafe.Pointer, size uintptr, pointer bool) (uint64, error) {
	if !p.lean {
		return p.runPooled(ctx, size, pointer)
	}
	arg := uint64(uintptr(ctx))
	if size == 0 && !pointer {
		arg = 0 // as SetContext
	}
	pid := procPin()
	if pid >= len(leanCaches) {
		procUnpin()
		return p.runLeanSlow(ctx, size, arg)
	}
	c := &leanCaches[pid]
	raceAcquire(unsafe.Pointer(c))
	if c.epoch != gcEpoch.Load() {
		c.age()
	}
	way := 0
	for way < leanWays && c.ids[way] != p.id {
		way++
	}
	if way == leanWays {
		raceRelease(unsafe.Pointer(c))
		procUnpin()
		return p.runLeanSlow(ctx, size, arg)
	}
	c.used |= 1 << way
	// beginLean, with room for the regions (putLean made it).
	e := c.envs[way]
	e.prog = p
	e.st.Regions = e.st.Regions[:0]
	lo := uint64(uintptr(ctx))
	if size != 0 && lo+uint64(size) >= lo {
		e.st.Regions = e.st.Regions[:1]
		e.st.Regions[0] = region{lo: lo, hi: lo + uint64(size), writable: true, keep: ctx}
	}
	if len(p.regions) != 0 {
		e.addStatic(p)
	}
	e.st.Fixed = len(e.st.Regions)
	r := &e.regs
	r[0], r[1], r[2], r[3], r[4], r[5] = 0, arg, uint64(size), 0, 0, 0
	r[6], r[7], r[8], r[9] = 0, 0, 0, 0
	r[10] = e.st.StackLo + StackSize
	if e.depth > 0 {
		e.unwind()
	}
	e.base = 0
	chunk := min(p.budget, interpretSlice, leanChunk)
	pc, left, why := dispatch(e, 0, int(chunk))
	if why != whyExit {
		return p.leanGoOn(c, way, pc, left, why, chunk)
	}
	r0 := r[0]
	// e.st.Executed is not set: no one sees this Env's.
	e.endLean()
	raceRelease(unsafe.Pointer(c))
	procUnpin()
	return r0, nil
}

// leanGoOn goes on with a lean run whose first chunk (pinned to its P)
// did not end in its exit: anything else may take long or allocate, so
// the run goes on unpinned, with its Env out of the cache.
//
//go:noinline
func (p *Program) leanGoOn(c *leanCache, way int, pc, left int, why uint8, chunk uint64) (uint64, error) {
	e := c.envs[way]
	c.ids[way], c.envs[way] = 0, nil
	raceRelease(unsafe.Pointer(c))
	procUnpin()
	e.sliceStart, e.sliceLeft = 0, interpretSlice
	budget := p.budget
	r0, rest, err := e.stopped(pc, left, why, chunk, budget)
	e.st.Executed = budget - rest
	e.endLean()
	p.putLean(e)
	return r0, err
}

// age drops, after a garbage collection, the Envs no run took since the
// one before (as sync.Pool keeps its objects for one more cycle).
//
//go:noinline
func (c *leanCache) age() {
	for way := range leanWays {
		if c.used&(1<<way) == 0 {
			c.ids[way], c.envs[way] = 0, nil
		}
	}
	c.epoch, c.used = gcEpoch.Load(), 0
}

// addStatic adds the static regions of p to a lean run's.
//
//go:noinline
func (e *Env) addStatic(p *Program) {
	e.st.Regions = append(e.st.Regions, p.regions...)
}

// unwind pops the frames of a run that failed inside a call.
//
//go:noinline
func (e *Env) unwind() {
	for e.depth > 0 {
		e.depth--
		e.frames[e.depth].prog = nil
	}
}

// runLeanSlow is run for a lean program with an Env from the program's
// pool, which then goes to the P's cache if it has room.
func (p *Program) runLeanSlow(ctx unsafe.Pointer, size uintptr, arg uint64) (uint64, error) {
	e := p.envs.Get()
	// The cache's runs must not allocate: room for every region.
	if need := 1 + len(p.regions); cap(e.st.Regions) < need {
		e.st.Regions = make([]region, 0, need)
	}
	p.beginLean(e, ctx, size, arg)
	budget := p.budget
	r0, rest, err := e.drive(0, budget)
	e.st.Executed = budget - rest
	e.endLean()
	p.putLean(e)
	return r0, err
}

// putLean gives e, which ran p lean, to the P's cache if it has room, or
// else to p's pool.
func (p *Program) putLean(e *Env) {
	pid := procPin()
	if pid < len(leanCaches) {
		c := &leanCaches[pid]
		raceAcquire(unsafe.Pointer(c))
		if c.epoch != gcEpoch.Load() {
			c.age()
		}
		free := -1
		for way := range leanWays {
			if c.ids[way] == p.id {
				free = -1 // one Env per program is enough
				break
			}
			if c.envs[way] == nil && free < 0 {
				free = way
			}
		}
		if free >= 0 {
			c.ids[free], c.envs[free] = p.id, e
			c.used |= 1 << free
			raceRelease(unsafe.Pointer(c))
			procUnpin()
			return
		}
		raceRelease(unsafe.Pointer(c))
	}
	procUnpin()
	p.envs.pool.Put(e)
}

// beginLean prepares e, as Reset left it, for a lean run of p: what Exec
// and run do.
func (p *Program) beginLean(e *Env, ctx unsafe.Pointer, size uintptr, arg uint64) {
	e.prog = p
	lo := uint64(uintptr(ctx))
	if size != 0 && lo+uint64(size) >= lo {
		e.st.Regions = append(e.st.Regions, region{lo: lo, hi: lo + uint64(size), writable: true, keep: ctx})
	}
	if len(p.regions) != 0 {
		e.st.Regions = append(e.st.Regions, p.regions...)
	}
	e.st.Fixed = len(e.st.Regions)
	r := &e.regs
	r[0], r[1], r[2], r[3], r[4], r[5] = 0, arg, uint64(size), 0, 0, 0
	r[6], r[7], r[8], r[9] = 0, 0, 0, 0
	r[10] = e.st.StackLo + StackSize
	e.unwind()
	e.base = 0
	e.sliceStart, e.sliceLeft = 0, interpretSlice
}

// endLean leaves e as Reset would: a lean run changes nothing it clears
// but the regions. Neither their memory nor the program may stay
// reachable from a cache.
func (e *Env) endLean() {
	for i := range e.st.Regions {
		e.st.Regions[i].keep = nil
	}
	e.st.Regions = e.st.Regions[:0]
	e.prog = nil
}
