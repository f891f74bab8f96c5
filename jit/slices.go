package jit

import (
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/vm"
)

// Generated code cannot be preempted by Go, and a time limit or a
// cancellation needs Go to look at the clock and the context. Code that
// can run long (Program.resumable) therefore gets its budget one slice
// at a time: when the slice runs out it returns to Go (backend.ReasonSlice),
// which checks the run's limits (engine.SliceEnded, where the goroutine
// also stops for the scheduler and the garbage collector) and re-enters
// it with the next slice. Slices adapt to how fast the code spends them,
// so that each takes about sliceTarget.
const (
	firstSlice  = 1 << 16
	minSlice    = 1 << 12
	maxSlice    = 1 << 26
	sliceTarget = 100_000 // ns
)

// budgetSlices is the part of a run's budget that Go keeps while the code
// spends the slice in its budget register (runState.budget).
type budgetSlices struct {
	reserve uint64 // not handed out yet
	size    uint64 // of the next slice
	at      int64  // when the last slice was handed out (0: not timed yet)
}

// sliceOverride, if not 0, is the size of every slice: tests make it tiny,
// so that slices end at every kind of charging instruction.
var sliceOverride uint64

// leanSlice returns what a lean run of resumable code, which gets one
// slice, takes of budget: the first slice at most.
func leanSlice(budget int64) int64 {
	return min(budget, int64(sliceSize()))
}

// sliceSize returns the size of a run's first slice.
func sliceSize() uint64 {
	if sliceOverride != 0 {
		return sliceOverride
	}
	return firstSlice
}

// setBudget gives the code of p the budget of a run, or its first slice,
// and returns what Go keeps.
func (p *Program) setBudget(s *runState, budget uint64) budgetSlices {
	first := sliceSize()
	if p.resumable && budget > first {
		s.budget = int64(first)
		return budgetSlices{reserve: budget - first, size: first}
	}
	s.budget = int64(budget)
	return budgetSlices{}
}

// next is called when the code's slice ran out (ReasonSlice) with what
// the code left in s.budget (negative: the block that ran out overdrew
// it): it checks the run's limits and hands out the next slice. It
// returns the cause that ends the run, vm.ErrBudgetExceeded when the
// reserve cannot pay the overdraft.
func (sl *budgetSlices) next(e *vm.Env, s *runState) error {
	if err := engine.SliceEnded(unsafe.Pointer(e)); err != nil {
		return err
	}
	now := nanotime()
	if sl.at != 0 {
		elapsed := uint64(max(now-sl.at, 1))
		sl.size = min(max(sl.size*sliceTarget/elapsed, minSlice), maxSlice)
	}
	sl.at = now
	if sliceOverride != 0 {
		sl.size = sliceOverride
	}
	if uint64(-s.budget) > sl.reserve { // only a negative budget ends a slice
		s.budget, sl.reserve = 0, 0
		return vm.ErrBudgetExceeded
	}
	take := min(sl.reserve, sl.size+uint64(-s.budget))
	sl.reserve -= take
	s.budget += int64(take)
	return nil
}

// nanotime is the runtime's monotonic clock, read through the vDSO; the
// runtime keeps this symbol linkable on purpose (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
