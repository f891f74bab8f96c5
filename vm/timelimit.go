package vm

import (
	"context"
	"time"
	_ "unsafe" // go:linkname
)

// Runs are bounded three ways: the instruction budget (deterministic:
// each instruction costs one unit, helpers what their work costs, see
// Env.Charge), a wall-clock limit (Options.Timeout) and cancellation
// (RunContext). Engines hand their code the budget one slice at a time;
// when a slice runs out they come back to Go, which checks the clock and
// the context (Env.sliceEnded) and gives the next slice. A run shorter
// than a slice never reads the clock, so the limits cost nothing on the
// hot path.

// DefaultTimeout is the wall-clock limit of a run when the program's
// Options set none.
const DefaultTimeout = time.Second

// interpretSlice is the interpreter's slice of the budget: about 100 µs of
// interpretation, which bounds how late a run notices its deadline or a
// cancellation. Tests make it tiny, so that slices end at every kind of
// charging instruction.
var interpretSlice uint64 = 1 << 16

// ErrTimeout is the cause of a run that exceeded its time limit
// (Options.Timeout). errors.Is(err, context.DeadlineExceeded) also holds.
var ErrTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string        { return "run exceeded its time limit" }
func (timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// nanotime is the runtime's monotonic clock, read through the vDSO; the
// runtime keeps this symbol linkable on purpose (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// RunContext is Run with a context: cancelling ctx, or reaching its
// deadline, ends the run with a *RunError wrapping ctx.Err(). The run also
// keeps the program's own time limit (Options.Timeout).
func (p *Program) RunContext(ctx context.Context, mem []byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, &RunError{Err: err}
	}
	e := p.envs.Get()
	e.SetContext(mem)
	e.SetRunContext(ctx)
	r0, err := p.Exec(e)
	p.envs.Put(e)
	return r0, err
}

// SetRunContext makes ctx end the runs on e, as RunContext does, until
// Reset. A nil ctx removes it.
func (e *Env) SetRunContext(ctx context.Context) {
	e.ctx = ctx
	if ctx != nil && ctx.Done() == nil {
		e.ctx = nil // never cancelled
	}
}

// SetTimeout sets the wall-clock limit of the runs on e (0: the
// program's, a negative value: none), until Reset.
func (e *Env) SetTimeout(d time.Duration) { e.timeout = d }

// Charge charges n units of work to the run's budget. Helpers call it for
// what they do beyond a plain call: a system call, a copy of n bytes, an
// iteration of bpf_loop. It reports false, and the run ends with
// ErrBudgetExceeded when the helper returns, if the budget cannot pay.
func (e *Env) Charge(n uint64) bool {
	if n > e.st.BudgetLeft {
		e.st.BudgetLeft = 0
		e.st.Status |= statusOverdrawn
		return false
	}
	e.st.BudgetLeft -= n
	return true
}

// interpretChunk interprets from pc with what is left of the current
// slice of the budget, and says what it gave. (It lives here, after
// interp.go, so that interpret's place in the binaries measured in
// BENCHMARKS.md stays where it was: see the Interpreter section of
// ARCHITECTURE.md.)
func (e *Env) interpretChunk(pc int, budget uint64) (int, int, uint8, uint64) {
	chunk := min(budget, e.sliceLeft)
	pc, left, why := dispatch(e, pc, int(chunk))
	return pc, left, why, chunk
}

// nextSlice is sliceEnded for the interpreter, which then starts its
// next slice.
func (e *Env) nextSlice() error {
	e.sliceLeft = interpretSlice
	return e.sliceEnded()
}

// sliceEnded is what an engine calls each time a run has used a slice of
// its budget: it returns the cause that ends the run, if any, its context's
// error or ErrTimeout. The time limit is measured from the first slice's
// end: a run that ends within one slice does not read the clock.
func (e *Env) sliceEnded() error {
	if e.ctx != nil {
		if err := e.ctx.Err(); err != nil {
			return err
		}
	}
	limit := e.timeout
	if limit == 0 && e.prog != nil {
		limit = e.prog.timeout
	}
	if limit <= 0 {
		return nil
	}
	now := nanotime()
	if e.sliceStart == 0 {
		e.sliceStart = now
		return nil
	}
	if time.Duration(now-e.sliceStart) > limit {
		return ErrTimeout
	}
	return nil
}

// completeCharged completes the instruction at slot at, which charged the
// budget and stopped the interpreter because its slice ran out (the run's
// budget did not): every charging instruction charges before any other
// effect of its own. It returns where interpretation goes on and, for
// instructions whose effect is the driver's, the reason to handle (0:
// none).
func (e *Env) completeCharged(at int) (pc int, why uint8) {
	in := &e.prog.code[at]
	switch in.op {
	case opCall, opCallX, opCallArrayLookup:
		return at + 1, whyCall
	case opLdAbsB, opLdAbsH, opLdAbsW, opLdIndB, opLdIndH, opLdIndW:
		return at + 1, whyPacket
	case opCallLocal:
		f := &e.frames[e.depth]
		f.retPC = int32(at + 1)
		f.callee = [4]uint64{e.regs[6], e.regs[7], e.regs[8], e.regs[9]}
		e.depth++
		e.regs[10] -= StackFrameSize
		return int(in.off), 0
	case opExit:
		if e.depth == e.base {
			return at + 1, whyExit
		}
		e.depth--
		f := &e.frames[e.depth]
		r := &e.regs
		r[6], r[7], r[8], r[9] = f.callee[0], f.callee[1], f.callee[2], f.callee[3]
		r[10] += StackFrameSize
		if f.prog != nil {
			return int(f.retPC), whyReturn
		}
		return int(f.retPC), 0
	}
	// A taken jump: conditional jumps charge only when taken.
	return int(in.off), 0
}
