package jit_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// leanModes are the safety modes a lean program runs in.
var leanModes = []struct {
	name string
	opts jit.Options
}{{"checked", jit.Options{}}, {"unchecked", jit.Options{Unchecked: true}}}

// Programs that call no helper run without BeginRun (Exec) or without an
// Env (Run, RunPointer), unless they can run long (loops, local calls),
// which need an Env to come back to Go between slices of their budget:
// results and errors are the interpreter's on every path.
func TestLeanRuns(t *testing.T) {
	skipUnoptimised(t)
	for _, tc := range []struct {
		name    string
		src     string
		ctx     int    // context bytes, 0: none
		budget  uint64 // Exec's budget, 0: the program's (1,000,000)
		checked bool   // only in checked mode (the program is not safe)
		long    bool   // local calls, or loops that write other than the stack: not lean
	}{
		{name: "args", src: "mov %r0, %r2\nadd %r0, %r3\nadd %r0, %r4\nadd %r0, %r5\nexit", ctx: 24},
		{name: "empty context", src: "mov %r0, %r1\nadd %r0, %r2\nexit"},
		{name: "context", src: "ldxdw %r0, [%r1+8]\nstxdw [%r1], %r0\nexit", ctx: 16},
		{name: "stack bottom", src: "stdw [%r10-4096], 5\nldxdw %r0, [%r10-4096]\nexit", checked: true},
		{name: "stack", src: "stdw [%r10-8], 5\nstdw [%r10-512], 6\nldxdw %r0, [%r10-8]\nldxdw %r1, [%r10-512]\nadd %r0, %r1\nexit"},
		{name: "local calls", src: `
			mov %r1, 5
			call local f
			exit
		f:
			stxdw [%r10-8], %r1
			mov %r0, %r1
			jeq %r1, 0, +4
			sub %r1, 1
			call local f
			ldxdw %r1, [%r10-8]
			add %r0, %r1
			exit`, long: true},
		{name: "packet", src: "mov %r6, %r1\nmov %r0, 7\nldabsw 0\nexit", ctx: 8},
		{name: "budget", src: "mov %r0, 0\nadd %r0, 1\nja -2\nexit"},
		{name: "budget set", src: "mov %r0, 0\nadd %r0, 1\njlt %r0, 1000, -2\nexit", budget: 100},
		{name: "long loop", src: "mov %r0, 0\nadd %r0, 1\njlt %r0, 100000, -2\nexit"},
		{name: "long loop, stack", src: "stdw [%r10-8], 0\nldxdw %r0, [%r10-8]\nadd %r0, 1\nstxdw [%r10-8], %r0\njlt %r0, 100000, -4\nexit"},
		{name: "loop writing the context", src: "mov %r0, 0\nstxdw [%r1], %r0\nadd %r0, 1\njlt %r0, 10, -3\nexit", ctx: 8, long: true},
		{name: "call depth", src: "call local f\nexit\nf:\ncall local f\nexit", long: true},
		{name: "context overrun", src: "ldxdw %r0, [%r1+16]\nexit", ctx: 16, checked: true},
		{name: "write above the stack", src: "stdw [%r10+8], 1\nmov %r0, 0\nexit", checked: true},
		{name: "null", src: "ldxb %r0, [%r1]\nexit", checked: true},
		{name: "misaligned", src: "mov %r0, 1\nlock add [%r1+1], %r0\nexit", ctx: 16, checked: true},
	} {
		vp := loadBudget(t, 1000000, tc.src)
		for _, m := range leanModes {
			if tc.checked && m.opts.Unchecked {
				continue
			}
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				p := compile(t, vp, m.opts)
				if p.Lean() == tc.long {
					t.Fatalf("lean %v", p.Lean())
				}
				run := func(p interface {
					Exec(*vm.Env) (uint64, error)
				}, path string) string {
					ctx := make([]byte, tc.ctx)
					for i := range ctx {
						ctx[i] = byte(i)
					}
					var r0 uint64
					var err error
					switch path {
					case "Run":
						if tc.budget != 0 {
							return "skip"
						}
						if jp, ok := p.(*jit.Program); ok {
							r0, err = jp.Run(ctx)
						} else {
							r0, err = p.(*vm.Program).Run(ctx)
						}
					case "RunPointer":
						if tc.budget != 0 || tc.ctx == 0 {
							return "skip"
						}
						ptr := unsafe.Pointer(unsafe.SliceData(ctx))
						if jp, ok := p.(*jit.Program); ok {
							r0, err = jp.RunPointer(ptr, uintptr(len(ctx)))
						} else {
							r0, err = p.(*vm.Program).RunPointer(ptr, uintptr(len(ctx)))
						}
					case "Exec":
						e := vm.NewEnv()
						e.SetContext(ctx)
						e.SetArg(2, 3)
						e.SetArg(3, 4)
						e.SetArg(4, 5)
						e.SetBudget(tc.budget)
						r0, err = p.Exec(e)
						if err == nil || errors.Is(err, vm.ErrBudgetExceeded) {
							// Executed is not the interpreter's after a
							// fault (the budget is charged at block ends).
							path += fmt.Sprintf(", executed %d", e.Executed())
						}
					}
					return fmt.Sprintf("%s: r0 %d, err %s, ctx %v", path, r0, describe(err, ctx), ctx)
				}
				for _, path := range []string{"Run", "RunPointer", "Exec"} {
					for range 2 {
						got, want := run(p, path), run(vp, path)
						if got != want {
							t.Errorf("%s; interpreter: %s", got, want)
						}
					}
				}
			})
		}
	}
}

// loadBudget loads src with a budget of n instructions.
func loadBudget(t *testing.T, n uint64, src string) *vm.Program {
	t.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatal(err)
	}
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Budget: n})
	if err != nil {
		t.Fatal(err)
	}
	return vp
}

// describe describes err with addresses relative to ctx's, and only the
// pc, kind and size of faults outside it (on the stack, whose address
// differs between engines and paths).
func describe(err error, ctx []byte) string {
	var re *vm.RunError
	if !errors.As(err, &re) || re.Addr == 0 {
		return fmt.Sprint(err)
	}
	off := re.Addr - uint64(uintptr(unsafe.Pointer(unsafe.SliceData(ctx))))
	if off > uint64(len(ctx)) {
		return fmt.Sprintf("pc %d: %d-byte access outside the context: %v", re.PC, re.Size, re.Err)
	}
	return fmt.Sprintf("pc %d: %d-byte access at context+%d: %v", re.PC, re.Size, off, re.Err)
}

// An empty context is r1 = 0 for Run, but RunPointer with a size of 0
// passes its pointer, as in vm.
func TestLeanEmptyContext(t *testing.T) {
	vp := loadVM(t, "mov %r0, %r1\nexit", nil)
	p := compile(t, vp, jit.Options{})
	var x [8]byte
	ptr := unsafe.Pointer(&x)
	for _, tc := range []struct {
		name string
		run  func() (uint64, error)
		want uint64
	}{
		{"Run nil", func() (uint64, error) { return p.Run(nil) }, 0},
		{"Run empty", func() (uint64, error) { return p.Run(x[:0]) }, 0},
		{"RunPointer nil", func() (uint64, error) { return p.RunPointer(nil, 0) }, 0},
		{"RunPointer empty", func() (uint64, error) { return p.RunPointer(ptr, 0) }, uint64(uintptr(ptr))},
	} {
		if r0, err := tc.run(); err != nil || r0 != tc.want {
			t.Errorf("%s: %#x, %v; want %#x", tc.name, r0, err, tc.want)
		}
	}
}

// Programs that call helpers are not lean.
func TestLeanNotWithHelpers(t *testing.T) {
	hs := vm.Helpers{1: {Name: "one", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 1 }}}
	vp := loadVM(t, "call 1\nexit", hs)
	for _, m := range leanModes {
		p := compile(t, vp, m.opts)
		if p.Lean() {
			t.Errorf("%s: lean", m.name)
		}
		if r0, err := p.Run(nil); err != nil || r0 != 1 {
			t.Errorf("%s: %d, %v", m.name, r0, err)
		}
	}
}

// Run takes the path a program needs: stackless for code with nothing to
// set up that never names r10, plain for other such code, the full frame
// for code that reads r2 or r3 or checks accesses, an Env for code that
// calls helpers, makes local calls or loops writing other than its stack,
// and after Close.
func TestRunPaths(t *testing.T) {
	skipUnoptimised(t)
	hs := vm.Helpers{1: {Name: "one", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 1 }}}
	tests := []struct {
		name, src string
		unchecked bool
		want      string
	}{
		{"stackless", "mov %r0, 1\nexit", true, "stackless"},
		{"stackless_checked_no_memory", "mov %r0, %r1\nexit", false, "stackless"},
		{"plain", "stxdw [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit", true, "plain"},
		{"checked_stack", "stxdw [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit", false, "frame"},
		{"reads_r2", "mov %r0, %r2\nexit", true, "frame"},
		{"reads_r3", "mov %r0, %r3\nexit", true, "frame"},
		{"checked_memory", "ldxb %r0, [%r1]\nexit", false, "frame"},
		{"local_call", "call local f\nexit\nf:\nmov %r0, 2\nexit", true, "env"},
		{"loop", "mov %r0, 3\nsub %r0, 1\njne %r0, 0, -2\nexit", true, "stackless"},
		{"loop_checked_memory", "ldxb %r0, [%r1]\nadd %r0, 1\njlt %r0, 3, -2\nexit", false, "frame"},
		{"loop_writing_memory", "mov %r0, 0\nstb [%r1], 1\nadd %r0, 1\njlt %r0, 3, -3\nexit", true, "env"},
		{"helper", "call 1\nexit", true, "env"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := compile(t, loadVM(t, tc.src, hs), jit.Options{Unchecked: tc.unchecked})
			if got := jit.RunPath(p); got != tc.want {
				t.Errorf("path %s, want %s", got, tc.want)
			}
			if _, err := p.Run(make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
			p.Close()
			if got := jit.RunPath(p); got != "env" {
				t.Errorf("closed: path %s, want env", got)
			}
			if _, err := p.Run(make([]byte, 8)); !errors.Is(err, jit.ErrClosed) {
				t.Errorf("closed: %v, want %v", err, jit.ErrClosed)
			}
		})
	}
}

// Lean runs from many goroutines, on each path, with results, budget
// errors and faults mixed: each run has its own frame or Env.
func TestLeanConcurrent(t *testing.T) {
	vp := loadBudget(t, 10000, `
		ldxdw %r0, [%r1]
		jeq %r0, 0, fault
		jeq %r0, 1, forever
		mov %r3, %r0
	loop:
		stxdw [%r10-8], %r0
		ldxdw %r0, [%r10-8]
		add %r0, 1
		sub %r3, 1
		jne %r3, 0, loop
		stxdw [%r1], %r0
		exit
	fault:
		ldxdw %r0, [%r1+8]
		exit
	forever:
		ja forever`)
	p := compile(t, vp, jit.Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			e := vm.NewEnv()
			ctx := make([]byte, 8)
			for i := range 300 {
				n := uint64(i%50) + 2 // loop n times: r0 = 2n
				switch i % 7 {
				case 3:
					n = 0
				case 5:
					n = 1
				}
				*(*uint64)(unsafe.Pointer(&ctx[0])) = n
				var r0 uint64
				var err error
				switch (g + i) % 3 {
				case 0:
					r0, err = p.Run(ctx)
				case 1:
					r0, err = p.RunPointer(unsafe.Pointer(&ctx[0]), 8)
				default:
					e.Reset()
					e.SetContext(ctx)
					r0, err = p.Exec(e)
				}
				var ok bool
				switch n {
				case 0:
					var re *vm.RunError
					ok = errors.As(err, &re) && errors.Is(err, vm.ErrMemoryAccess) && re.Addr == uint64(uintptr(unsafe.Pointer(&ctx[0])))+8
				case 1:
					ok = errors.Is(err, vm.ErrBudgetExceeded)
				default:
					ok = err == nil && r0 == 2*n
				}
				if !ok {
					t.Errorf("goroutine %d, run %d (n %d): %d, %v", g, i, n, r0, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// The frame of a lean run may need a larger goroutine stack: runs at
// every depth of a recursion, from fresh goroutines with small stacks.
func TestLeanStackGrowth(t *testing.T) {
	vp := loadVM(t, "stdw [%r10-4096], 7\nstdw [%r10-8], 8\nldxdw %r0, [%r10-4096]\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit", nil)
	p := compile(t, vp, jit.Options{})
	var recurse func(n int) uint64
	recurse = func(n int) uint64 {
		var pad [64]byte
		if n == 0 {
			r0, err := p.Run(pad[:])
			if err != nil {
				t.Error(err)
			}
			return r0
		}
		return recurse(n-1) + uint64(pad[n%64])
	}
	for depth := range 200 {
		ch := make(chan uint64)
		go func() { ch <- recurse(depth) }()
		if got := <-ch; got != 15 {
			t.Fatalf("depth %d: %d, want 15", depth, got)
		}
	}
}

// A closed lean program returns ErrClosed on every path.
func TestLeanClosed(t *testing.T) {
	vp := loadVM(t, "mov %r0, 1\nexit", nil)
	p, err := jit.Compile(vp, nil)
	if err != nil {
		t.Skip(err)
	}
	p.Close()
	var x [8]byte
	for _, run := range []func() (uint64, error){
		func() (uint64, error) { return p.Run(x[:]) },
		func() (uint64, error) { return p.RunPointer(unsafe.Pointer(&x), 8) },
		func() (uint64, error) { return p.Exec(vm.NewEnv()) },
	} {
		if _, err := run(); !errors.Is(err, jit.ErrClosed) {
			t.Errorf("%v, want ErrClosed", err)
		}
	}
}

// diffRun compares Run of p, a lean program, with the interpreter's run
// of vp on an Env with only the context (which is what Run gives a
// program): r0, the error (addresses outside the context compared only as
// outside), the context and array maps. diffEngines calls it for lean
// programs with the default budget. Run starts with a zeroed stack here
// (ZeroFrameStack), as the interpreter on a new Env. Programs whose
// outcome on the interpreter depends on the stack's address (an access
// past its end that lands in other memory) are left out: the interpreter
// runs them on two Envs.
func diffRun(vp *vm.Program, p *jit.Program, in diffInput) error {
	if !p.Lean() || in.budget != 0 || usesStackAddress(vp.Instructions()) {
		return nil
	}
	mem := guardedMem(len(in.mem)) // one buffer: the same pointer values
	run := func(f func(mem []byte) (uint64, error)) outcome {
		copy(mem, in.mem)
		for _, m := range vp.Maps() {
			if a, ok := m.(maps.MemoryMap); ok {
				clear(a.Memory())
			}
		}
		r0, err := f(mem)
		o := outcome{r0: r0, mem: bytes.Clone(mem), err: describe(err, mem)}
		for _, m := range vp.Maps() {
			if a, ok := m.(maps.MemoryMap); ok {
				o.maps = append(o.maps, bytes.Clone(a.Memory()))
			}
		}
		return o
	}
	interp := func(mem []byte) (uint64, error) {
		e := vm.NewEnv()
		e.SetContext(mem)
		return vp.Exec(e)
	}
	want := run(interp)
	if o := run(interp); o.r0 != want.r0 || o.err != want.err || !bytes.Equal(o.mem, want.mem) || !slices.EqualFunc(o.maps, want.maps, bytes.Equal) {
		return nil
	}
	jit.ZeroFrameStack(p)
	entries := []struct {
		name string
		f    func([]byte) (uint64, error)
	}{{"Run", p.Run}}
	if d := p.Direct(); d != nil {
		entries = append(entries, struct {
			name string
			f    func([]byte) (uint64, error)
		}{"Direct", d})
	}
	for _, e := range entries {
		got := run(e.f)
		switch {
		case got.r0 != want.r0 || got.err != want.err:
			return fmt.Errorf("%s: jit %v, interpreter %v", e.name, got, want)
		case !bytes.Equal(got.mem, want.mem):
			return fmt.Errorf("%s: context memory differs (%v)\njit:         %x\ninterpreter: %x", e.name, want, got.mem, want.mem)
		case !slices.EqualFunc(got.maps, want.maps, bytes.Equal):
			return fmt.Errorf("%s: array maps differ (%v)\njit:         %x\ninterpreter: %x", e.name, want, got.maps, want.maps)
		}
	}
	return nil
}

// usesStackAddress reports whether insns use r10 as a value (not only as
// the base of a load or store): the stack's address differs between an Env
// and Run's frame, so such programs cannot compare.
func usesStackAddress(insns []asm.Instruction) bool {
	for i := 0; i < len(insns); i++ {
		ins := insns[i]
		switch ins.Class() {
		case asm.ClassLD:
			if ins.IsLDDW() {
				i++
				continue
			}
			if ins.Src == asm.R10 {
				return true
			}
		case asm.ClassSTX:
			if ins.Src == asm.R10 {
				return true
			}
		case asm.ClassALU, asm.ClassALU64:
			if ins.Src == asm.R10 || ins.Dst == asm.R10 {
				return true
			}
		case asm.ClassJMP, asm.ClassJMP32:
			if ins.Opcode != asm.OpCall && ins.Opcode != asm.OpExit && (ins.Src == asm.R10 || ins.Dst == asm.R10) {
				return true
			}
		}
	}
	return false
}

// The fuzzer found that the comparison of Run must use the interpreter's
// context buffer: the program computes with r1's value.
func TestLeanRunContextAddress(t *testing.T) {
	diffSource(t, `
		mov %r9, %r1
		mov %r0, 0x7fffffff
		and %r0, %r9
		exit`, diffInput{mem: make([]byte, 8)}, allModes)
}

// The fuzzer found that Run's stack is not zeroed: the program reads a
// slot it never wrote (which a verifier refuses). With ZeroFrameStack it
// reads 0, as on a new Env.
func TestLeanZeroFrameStack(t *testing.T) {
	diffSource(t, `
		mov %r0, 0x30303030
		ldxsw %r5, [%r10-52]
		smod32 %r0, %r5
		exit`, diffInput{mem: make([]byte, 8)}, allModes)
}

// Errors of runs without an Env are built by Go code that runFrame calls
// from its frame, and programs that are not lean run from run's tail
// jump: both while the garbage collector runs and stacks grow (fresh
// goroutines start small).
func TestLeanRunGC(t *testing.T) {
	fault := loadBudget(t, 1000, "ldxdw %r0, [%r1+8]\nexit")
	budget := loadBudget(t, 1000, "ja -1\nexit")
	hs := vm.Helpers{1: {Name: "one", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 1 }}}
	helper := loadVM(t, "call 1\nexit", hs)
	progs := []*jit.Program{compile(t, fault, jit.Options{}), compile(t, budget, jit.Options{}), compile(t, helper, jit.Options{})}
	defer collectConstantly()()
	var wg sync.WaitGroup
	for g := range 200 {
		wg.Go(func() {
			ctx := make([]byte, 8)
			for i := range 20 {
				p := progs[(g+i)%3]
				r0, err := p.Run(ctx)
				var ok bool
				switch (g + i) % 3 {
				case 0:
					ok = errors.Is(err, vm.ErrMemoryAccess)
				case 1:
					ok = errors.Is(err, vm.ErrBudgetExceeded)
				case 2:
					ok = err == nil && r0 == 1
				}
				if !ok {
					t.Errorf("goroutine %d, run %d: %d, %v", g, i, r0, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// collectConstantly runs the garbage collector in a loop until the
// returned function is called, which waits for the loop to end.
func collectConstantly() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
				runtime.GC()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// Clang's code reads no register but r1 and r10 before writing it, so
// the benchmark set's programs that call no helper run on a plain frame
// (the front end's liveness sees through their loops); none of them uses the
// stack.
func TestBenchmarkSetRunsPlain(t *testing.T) {
	setPrograms(t, func(name string, vp *vm.Program) {
		p := compile(t, vp, jit.Options{Unchecked: true})
		if want := map[bool]string{true: "stackless", false: "env"}[p.Lean()]; jit.RunPath(p) != want {
			t.Errorf("%s: path %s, want %s", name, jit.RunPath(p), want)
		}
	})
}
