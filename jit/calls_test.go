package jit_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

func TestLocalCalls(t *testing.T) {
	tests := []struct{ name, src string }{
		{"preserves_r6_r9", `
			mov %r6, 6
			mov %r7, 7
			mov %r8, 8
			mov %r9, 9
			call local f
			add %r0, %r6
			add %r0, %r7
			add %r0, %r8
			add %r0, %r9
			exit
		f:
			mov %r6, 100
			mov %r7, 100
			mov %r8, 100
			mov %r9, 100
			stxdw [%r10-8], %r6
			mov %r0, %r10
			ldxdw %r0, [%r10-8]
			exit`},
		{"recursion_to_depth_limit", `
			mov %r1, 0
			call local f
			exit
		f:
			add %r1, 1
			stxdw [%r10-8], %r1
			call local f
			ldxdw %r0, [%r10-8]
			exit`},
		{"recursion_depth_7", `
			mov %r1, 7
			call local f
			exit
		f:
			stxdw [%r10-512], %r1
			sub %r1, 1
			jeq %r1, 0, +1
			call local f
			ldxdw %r2, [%r10-512]
			add %r0, %r2
			exit`},
		{"caller_frame_access", `
			mov %r1, 41
			stxdw [%r10-8], %r1
			call local f
			ldxdw %r0, [%r10-8]
			exit
		f:
			ldxdw %r2, [%r10+504]
			add %r2, 1
			stxdw [%r10+504], %r2
			exit`},
		{"helpers_inside_calls", `
			mov %r6, 3
			call local f
			add %r0, %r6
			exit
		f:
			mov %r1, 5
			call 1
			mov %r6, %r0
			call local g
			add %r0, %r6
			exit
		g:
			mov %r1, %r10
			call 1
			mov %r1, 0x42
			call 2
			exit`},
		{"stop_inside_calls", `
			call local f
			mov %r0, 1
			exit
		f:
			call local g
			exit
		g:
			mov %r1, 0x142
			call 2
			mov %r0, 9
			exit`},
		{"fail_inside_calls", `
			call local f
			exit
		f:
			mov %r1, 7
			call 7
			exit`},
		{"callx", `
			mov %r6, 1
			mov %r1, 3
			call %r6
			mov %r6, 2
			mov %r1, %r0
			call %r6
			exit`},
		{"callx_unknown", `
			mov %r6, 3
			call %r6
			exit`},
		{"callx_negative", `
			mov %r6, -1
			call %r6
			exit`},
		{"callx_huge", `
			lddw %r6, 0x100000001
			call %r6
			exit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffSource(t, tt.src, diffInput{}, allModes)
		})
	}
}

// TestBudget runs loops, calls and helper calls with every budget around
// the point where they run out: both engines must stop at the same
// instruction, or not at all.
func TestBudget(t *testing.T) {
	progs := []string{
		`mov %r0, 0
		mov %r1, 10
	loop:
		add %r0, %r1
		jeq %r0, 1000, +2
		sub %r1, 1
		jne %r1, 0, loop
		exit`,
		`mov %r1, 5
		call local f
		jgt %r0, 3, +0
		lddw %r2, 0x123456789
		ja +0
		exit
	f:
		call 1
		exit`,
		`mov %r0, 0
		ldabsb 1
		ldabsh 100
		exit`,
	}
	for i, src := range progs {
		for budget := uint64(1); budget < 60; budget++ {
			t.Run(fmt.Sprintf("prog%d_budget%d", i, budget), func(t *testing.T) {
				diffSource(t, src, diffInput{budget: budget, packet: []byte{1, 2, 3}}, allModes)
			})
		}
	}
}

func TestHelperPanics(t *testing.T) {
	hs := vm.Helpers{1: {Name: "panic", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { panic("boom") }}}
	vp := loadVM(t, "call local f\nexit\nf:\ncall 1\nexit", hs)
	p := compile(t, vp, jit.Options{})
	_, err := p.Run(nil)
	_, ierr := vp.Run(nil)
	if !errors.Is(err, vm.ErrHelperPanicked) || err.Error() != ierr.Error() {
		t.Fatalf("jit: %v; interpreter: %v", err, ierr)
	}
}

// TestTailCalls tail-calls from the entry function and from inside a local
// call (after which the callee's exit returns into the caller, which is
// another program).
func TestTailCalls(t *testing.T) {
	target := loadVM(t, `
		mov %r6, 1000
		add %r0, %r6
		mov %r1, %r0
		call 1
		exit`, testHelpers)
	hs := vm.Helpers{}
	for n, h := range testHelpers {
		hs[n] = h
	}
	hs[12] = vm.Helper{Name: "tail_call", Func: func(e *vm.Env, r1, _, _, _, _ uint64) uint64 {
		if r1 == 1 && e.TailCall(target) {
			return 0
		}
		return ^uint64(0)
	}}
	for _, src := range []string{
		"mov %r1, 1\nmov %r0, 5\ncall 12\nexit",
		"mov %r1, 2\ncall 12\nexit",
		`mov %r6, 7
		call local f
		add %r0, %r6
		mov %r1, %r0
		call 1
		exit
	f:
		mov %r6, 1
		mov %r1, 1
		call 12
		mov %r0, 55
		exit`,
	} {
		vp := loadVM(t, src, hs)
		if err := diffEngines(vp, diffInput{}, allModes...); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
	}
}

// TestRegions: memory a helper hands out becomes accessible, read-only
// regions refuse writes, and global data (lddw of a map value) is
// accessible as the interpreter allows.
func TestRegions(t *testing.T) {
	buf := make([]byte, 32)
	ro := make([]byte, 16)
	hs := vm.Helpers{
		1: {Name: "buf", Func: func(e *vm.Env, _, _, _, _, _ uint64) uint64 {
			e.AddBytes(buf, true)
			return uint64(uintptr(unsafe.Pointer(&buf[0])))
		}},
		2: {Name: "ro", Func: func(e *vm.Env, _, _, _, _, _ uint64) uint64 {
			e.AddBytes(ro, false)
			return uint64(uintptr(unsafe.Pointer(&ro[0])))
		}},
	}
	for _, src := range []string{
		"call 1\nmov %r6, %r0\nstdw [%r6+24], 5\nldxdw %r0, [%r6+24]\nexit",
		"call 1\nmov %r6, %r0\nstdw [%r6+25], 5\nexit",
		"call 2\nldxdw %r0, [%r0+8]\nexit",
		"call 2\nstb [%r0+8], 1\nexit",
		"call 2\nmov %r6, %r0\ncall 1\nldxdw %r1, [%r6]\nstxdw [%r0], %r1\nldxw %r0, [%r6+12]\nexit",
	} {
		vp := loadVM(t, src, hs)
		if err := diffEngines(vp, diffInput{}, checkedModes...); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
	}
	for _, flags := range []uint32{0, 0x80} {
		m := &directMap{mem: make([]byte, 24), flags: flags}
		insns := asm.MustAssemble("lddw %r1, map_val_by_fd(0)+8\nldxdw %r0, [%r1]\nstdw [%r1+8], 3\nldxdw %r0, [%r1+8]\nexit")
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{m}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := diffEngines(vp, diffInput{}, checkedModes...); err != nil {
			t.Fatalf("flags %#x: %v", flags, err)
		}
	}
}

type directMap struct {
	mem   []byte
	flags uint32
}

func (m *directMap) Memory() []byte { return m.mem }
func (m *directMap) Flags() uint32  { return m.flags }

// TestStackGrowthDuringHelper: a helper that grows the goroutine stack (so
// that Exec's frame, holding the run state, moves) while the program is
// inside nested local calls.
func TestStackGrowthDuringHelper(t *testing.T) {
	var deep func(n int) int
	deep = func(n int) int {
		var pad [256]byte
		pad[n%256] = byte(n)
		if n == 0 {
			return int(pad[0])
		}
		return deep(n-1) + int(pad[n%256])
	}
	hs := vm.Helpers{1: {Name: "grow", Func: func(_ *vm.Env, r1, _, _, _, _ uint64) uint64 {
		return uint64(deep(int(r1)))*0 + r1 + 1
	}}}
	vp := loadVM(t, `
		mov %r6, 10
		call local f
		add %r0, %r6
		exit
	f:
		mov %r6, 20
		call local g
		add %r0, %r6
		exit
	g:
		mov %r6, 30
		mov %r1, 2000
		call 1
		add %r0, %r6
		exit`, hs)
	p := compile(t, vp, jit.Options{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() { // fresh goroutines start with small stacks
			defer wg.Done()
			r0, err := p.Run(nil)
			if err != nil || r0 != 2001+30+20+10 {
				t.Errorf("r0 = %d, %v", r0, err)
			}
		}()
	}
	wg.Wait()
}

// TestConcurrentRunsWithGC runs one program from many goroutines while the
// GC runs and helpers allocate: runs must not interfere.
func TestConcurrentRunsWithGC(t *testing.T) {
	hs := vm.Helpers{1: {Name: "alloc", Func: func(_ *vm.Env, r1, _, _, _, _ uint64) uint64 {
		b := make([]byte, 64+r1%512)
		runtime.Gosched()
		return uint64(len(b))
	}}}
	vp := loadVM(t, `
		mov %r6, 0
		mov %r7, 200
	loop:
		mov %r1, %r7
		call local f
		add %r6, %r0
		sub %r7, 1
		jne %r7, 0, loop
		mov %r0, %r6
		exit
	f:
		stxdw [%r10-8], %r1
		call 1
		ldxdw %r1, [%r10-8]
		add %r0, %r1
		exit`, hs)
	want, err := vp.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := compile(t, vp, jit.Options{})
	defer collectConstantly()()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if r0, err := p.Run(nil); r0 != want || err != nil {
					t.Errorf("r0 = %d, %v; want %d", r0, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestClose(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	p, err := jit.Compile(loadVM(t, "mov %r0, 1\nexit", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r0, err := p.Run(nil); r0 != 1 || err != nil {
		t.Fatal(r0, err)
	}
	p.Close()
	p.Close()
	if _, err := p.Run(nil); !errors.Is(err, jit.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	// Programs that are never closed are unmapped when collected.
	for i := 0; i < 100; i++ {
		jit.Compile(loadVM(t, "mov %r0, 1\nexit", nil), nil)
	}
	runtime.GC()
	runtime.GC()
}

// TestRejectsCallbacks: callbacks (bpf_loop) need vm.Env.CallFunction
// support the JIT does not have yet; Compile says so instead of running
// them wrongly.
func TestRejectsCallbacks(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	insns := asm.MustAssemble("mov %r0, 0\nexit\nmov %r0, 1\nexit")
	fn := asm.LDDW(2, 0)
	fn[0].Src, fn[0].Imm = asm.PseudoFunc, 2 // the second function, 2 slots after the pair
	insns = append([]asm.Instruction{fn[0], fn[1]}, insns...)
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
	if err != nil {
		t.Skipf("vm does not load the callback program: %v", err)
	}
	if _, err := jit.Compile(vp, nil); !errors.Is(err, vm.ErrUnsupported) {
		t.Fatalf("Compile: %v, want %v", err, vm.ErrUnsupported)
	}
}
