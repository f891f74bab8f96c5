//go:build linux && (amd64 || arm64)

package jit

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// The run protocol shared by the native back ends: generated code returns
// to Go (enter) with a reason, and Go answers helper calls, tail calls and
// the end of a budget slice, and re-enters it.

// executed returns what a run with budget that ended with reason, left
// in the budget register and kept reserve in Go executed. A run that
// exceeded its budget executed all of it, as the interpreter counts,
// though the block that failed overdrew it.
func executed(reason, budget uint64, left int64, reserve uint64) uint64 {
	if reason&0xff == backend.ReasonBudget {
		return budget
	}
	return budget - reserve - uint64(left)
}

// exitError returns the error of a run that generated code ended with
// reason (not a helper call or a return into another program).
func exitError(reason, pc, addr, size uint64) error {
	switch reason & 0xff {
	case backend.ReasonFault:
		return &vm.RunError{PC: int(pc), Addr: addr, Size: int(size), Err: vm.ErrMemoryAccess}
	case backend.ReasonMisaligned:
		return &vm.RunError{PC: int(pc), Addr: addr, Size: int(size), Err: vm.ErrMisaligned}
	case backend.ReasonBudget: // the pc rides in the reason
		return &vm.RunError{PC: reasonPC(reason, pc), Err: vm.ErrBudgetExceeded}
	case backend.ReasonCallDepth:
		return &vm.RunError{PC: reasonPC(reason, pc), Err: vm.ErrCallDepth}
	}
	return &vm.RunError{PC: int(pc), Err: fmt.Errorf("jit: generated code returned unknown reason %d", reason)}
}

// execFull is Exec for programs that are not lean (or closed).
func (p *Program) execFull(e *vm.Env) (uint64, error) {
	if p.mem == nil {
		return 0, ErrClosed
	}
	// The state lives in the Env: no allocation, no sharing, and the
	// start stub sets it up, reading the arguments from the Env.
	s := stateOf(e)
	budget, mark := engine.BeginRun(unsafe.Pointer(e), unsafe.Pointer(p.vp))
	budget = min(budget, maxBudget)
	sl := p.setBudget(s, budget)
	if p.needsSave {
		return p.execWithSaveArea(e, s, budget, mark, sl)
	}
	enter(s, p.start)
	if s.reason != backend.ReasonExit {
		r0, err := p.continueRun(e, s, &sl)
		envOf(e).Executed = executed(s.reason, budget, s.budget, sl.reserve)
		engine.EndRun(unsafe.Pointer(e), mark)
		return r0, err
	}
	runtime.KeepAlive(p) // its code is running
	envOf(e).Executed = budget - sl.reserve - uint64(s.budget)
	engine.EndRun(unsafe.Pointer(e), mark)
	return s.regs[0], nil
}

// execWithSaveArea is Exec for programs whose helper calls may happen
// inside local calls: they need a save area for the native stack.
func (p *Program) execWithSaveArea(e *vm.Env, s *runState, budget uint64, mark int, sl budgetSlices) (uint64, error) {
	save := p.fam.saveArea(s)
	enter(s, p.start)
	r0, err := s.regs[0], error(nil)
	if s.reason != backend.ReasonExit {
		r0, err = p.continueRun(e, s, &sl)
	}
	s.saveArea = 0 // the buffer goes back to the pool
	p.fam.saveAreas.Put(save)
	envOf(e).Executed = executed(s.reason, budget, s.budget, sl.reserve)
	engine.EndRun(unsafe.Pointer(e), mark)
	return r0, err
}

// continueRun handles everything but a normal exit: helper calls, tail
// calls and errors, re-entering generated code until the run ends.
func (p *Program) continueRun(e *vm.Env, s *runState, sl *budgetSlices) (r0 uint64, err error) {
	cur := p
	var save *[saveAreaBytes]byte // for tail-call targets that need one
	// One deferred function for the whole run, not one per helper call:
	// it gives back the save area and turns a helper's panic (Go code the
	// embedder wrote) into the run's error instead of taking the host
	// down. Nothing else here panics.
	defer func() {
		if save != nil {
			s.saveArea = 0
			p.fam.saveAreas.Put(save)
		}
		if v := recover(); v != nil {
			r0, err = 0, &vm.RunError{PC: int(s.exitPC), Err: fmt.Errorf("%w: %v", vm.ErrHelperPanicked, v)}
		}
		runtime.KeepAlive(p) // and the family, whose code was running
	}()
	for {
		pc := int(s.exitPC)
		switch s.reason & 0xff {
		case backend.ReasonExit:
			return s.regs[0], nil
		case backend.ReasonHelper, backend.ReasonCallX, backend.ReasonHashLookup, backend.ReasonHashUpdate, backend.ReasonArrayLookup, backend.ReasonArrayHashLookup:
			kind, r := s.reason&0xff, &s.regs
			var refund int64
			if kind == backend.ReasonArrayLookup || kind == backend.ReasonArrayHashLookup {
				if r0, ok := cur.lookupArray(e, r[1], r[2]); ok {
					r[0] = r0
					break
				}
				if err := cur.chargeStretch(e, s, sl, pc); err != nil {
					return 0, err
				}
				refund = int64(s.exitSize)
			}
			if kind == backend.ReasonHashLookup || kind == backend.ReasonHashUpdate || kind == backend.ReasonArrayHashLookup {
				// Go answers what it can without the helper, as the
				// interpreter does.
				if r0, ok := engine.CallHash(unsafe.Pointer(e), kind == backend.ReasonHashUpdate, r[1], r[2], r[3], r[4]); ok {
					r[0] = r0
					s.budget += refund
					break
				}
			}
			var fn vm.HelperFunc
			if kind != backend.ReasonCallX {
				fn = cur.helpers[s.reason>>8]
			} else if n := s.regs[cur.vp.Instructions()[pc].Dst]; n <= 1<<31-1 {
				fn = cur.vp.Helpers()[int32(n)].Func
			}
			if fn == nil {
				return 0, &vm.RunError{PC: pc, Err: vm.ErrUnknownHelper}
			}
			// The helper charges its work to the run's budget (vm.Env.Charge).
			total := sl.reserve + uint64(s.budget)
			envOf(e).BudgetLeft = total
			s.regs[0] = fn(e, s.regs[1], s.regs[2], s.regs[3], s.regs[4], s.regs[5])
			if left := envOf(e).BudgetLeft; left != total {
				// The charge comes out of the slice, so that the slice
				// measures work; the reserve pays what the slice cannot.
				s.budget -= int64(total - left)
				if s.budget < 0 {
					sl.reserve -= uint64(-s.budget)
					s.budget = 0
				}
			}
			// The helper may have withdrawn a region (a ring buffer
			// record it submitted): forget the ones that allowed the
			// last accesses.
			s.hotReadEnd, s.hotWriteEnd = 0, 0
			if envOf(e).Status == 0 {
				s.budget += refund
			} else {
				next, r0, err := engine.HelperResult(unsafe.Pointer(e), pc)
				if next == nil {
					return r0, err
				}
				t, err := cur.fam.tailTarget((*vm.Program)(next))
				if err != nil {
					return 0, &vm.RunError{PC: pc, Err: fmt.Errorf("jit: tail call target: %w", err)}
				}
				cur = t
				s.resumePC, s.progTag = uint64(t.entry), uint64(t.tag)
				if !t.resumable { // its budget exits are final: it gets all
					s.budget += int64(sl.reserve)
					sl.reserve = 0
				}
				if t.needsSave && s.saveArea == 0 {
					save = p.fam.saveArea(s)
				}
			}
		case backend.ReasonSlice:
			pc = reasonPC(s.reason, s.exitPC)
			if err := sl.next(e, s); err != nil {
				if err == vm.ErrBudgetExceeded {
					s.reason = s.reason&^0xff | backend.ReasonBudget // it executed all of it
				}
				return 0, &vm.RunError{PC: pc, Err: err}
			}
		case backend.ReasonReturn:
			cur = p.fam.owner(s.resumePC)
			engine.SetProgram(unsafe.Pointer(e), unsafe.Pointer(cur.vp))
			s.progTag = uint64(cur.tag)
		default:
			return 0, exitError(s.reason, s.exitPC, s.exitAddr, s.exitSize)
		}
		enter(s, p.enter)
	}
}

// lookupArray answers a call of an ArrayLookup helper as the interpreter
// does: when r1 is a map pointer to an array and the 4-byte key at r2 is
// readable, r0 = the element's address, or 0 past the end. ok is false
// when the helper must answer.
func (p *Program) lookupArray(e *vm.Env, r1, r2 uint64) (r0 uint64, ok bool) {
	const entry = uint64(unsafe.Sizeof(vm.Map(nil)))
	off := r1 - p.arrayTable
	m := off / entry
	if off%entry != 0 || m >= uint64(len(p.arrays)) || p.arrays[m].Base == 0 {
		return 0, false
	}
	key, ok := e.Pointer(r2, 4, false)
	if !ok {
		return 0, false
	}
	a := &p.arrays[m]
	if idx := uint64(*(*uint32)(key)); idx < a.N {
		return a.Base + idx*a.Stride, true
	}
	return 0, true
}

// chargeStretch charges the stretch that ends at the helper call at pc
// (its length in exitSize), as the interpreter does when the call leaves
// for the helper, for code that leaves for Go without charging it
// (backend.ReasonArrayLookup). An overdrawn budget ends the slice, or the run.
func (p *Program) chargeStretch(e *vm.Env, s *runState, sl *budgetSlices, pc int) error {
	s.budget -= int64(s.exitSize)
	if s.budget >= 0 {
		return nil
	}
	err := vm.ErrBudgetExceeded
	if p.resumable {
		err = sl.next(e, s)
	}
	if err != nil {
		if err == vm.ErrBudgetExceeded {
			s.reason = s.reason&^0xff | backend.ReasonBudget // it executed all of it
		}
		return &vm.RunError{PC: pc, Err: err}
	}
	return nil
}

// saveArea gets a save area for the native stack and records it in s. The
// caller keeps the returned buffer alive for the run, then puts it back.
func (f *family) saveArea(s *runState) *[saveAreaBytes]byte {
	b, ok := f.saveAreas.Get().(*[saveAreaBytes]byte)
	if !ok {
		b = new([saveAreaBytes]byte)
	}
	s.saveArea = uint64(uintptr(unsafe.Pointer(b)))
	return b
}

// tailTarget returns the compiled form of vp, a tail-call target,
// compiling it on first use.
func (f *family) tailTarget(vp *vm.Program) (*Program, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.progs[vp]; ok && m.mem != nil {
		return m, nil
	}
	return f.compile(vp)
}
