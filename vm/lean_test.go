package vm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Run and RunPointer of programs that call no helpers take a short path
// (lean runs, with Envs from a cache per P, the first chunk of the budget
// interpreted pinned to the P). They must return exactly what Exec on a
// fresh Env does and leave the context as it does, whatever stops the
// run and wherever: inside the pinned chunk, past it, at a slice's end.
func TestLeanRunsMatchExec(t *testing.T) {
	loop := func(n int) string { // n iterations of 3 instructions
		return fmt.Sprintf("mov %%r0, 0\nmov %%r3, %d\nadd %%r0, 2\nsub %%r3, 1\njne %%r3, 0, -3\nexit", n)
	}
	cases := []struct {
		name, src string
		mem       int
		budgets   []uint64
	}{
		{"exit", "mov %r0, 1\nexit", 8, nil},
		{"context", "ldxdw %r0, [%r1]\nadd %r0, %r2\nstxdw [%r1], %r0\nexit", 8, nil},
		{"no context", "mov %r0, %r1\nadd %r0, %r2\nexit", 0, nil},
		{"registers read as zero", "mov %r0, %r3\nor %r0, %r4\nor %r0, %r5\nor %r0, %r6\nor %r0, %r9\nexit", 8, nil},
		{"stack", "stdw [%r10-8], 7\nldxdw %r0, [%r10-8]\nexit", 0, nil},
		{"local call", "mov %r6, 3\ncall local f\nadd %r0, %r6\nexit\nf:\nmov %r6, 9\nmov %r0, 1\nexit", 0, nil},
		{"global data", "lddw %r1, map_val_by_fd(0)+8\nldxdw %r0, [%r1]\nadd %r0, 1\nstxdw [%r1], %r0\nexit", 0, nil},
		{"fault", "ldxdw %r0, [%r1+8]\nexit", 8, nil},
		{"fault late", loop(5000) + "\nldxdw %r0, [%r1+8]\nexit", 8, nil},
		{"write fault", "mov %r1, 0\nstb [%r1], 1\nexit", 0, nil},
		{"call depth", "call local f\nexit\nf:\ncall local f\nexit", 0, nil},
		{"unknown callx", "mov %r1, 77\ncall %r1\nexit", 0, nil},
		{"packet load", "ldabsb 3\nexit", 16, nil},
		{"loop in the chunk", loop(100), 0, []uint64{0, 302, 301, 300, 3}},
		{"loop past the chunk", loop(3000), 8, []uint64{0, 9002, 9001, 4095, 4096, 4097, 4098, 1 << 16}},
		{"loop past slices", loop(50_000), 8, []uint64{0, 150_002, 150_001, 1<<16 - 1, 1 << 16, 1<<16 + 1}},
		{"call tree", "mov %r6, 0\ncall local f\nexit\nf:\nadd %r6, 1\njgt %r6, 4, +40\n" +
			strings.Repeat("call local f\n", 40) + "exit", 0, []uint64{100_000, 5000}},
	}
	for _, slice := range []uint64{0, 1, 3, 1000} {
		if slice != 0 {
			restore := vm.SetInterpretSlice(slice)
			defer restore()
		}
		for _, tc := range cases {
			if slice != 0 && slice < 100 && strings.HasPrefix(tc.name, "loop past slices") {
				continue // too slow
			}
			budgets := tc.budgets
			if budgets == nil {
				budgets = []uint64{0} // the default
			}
			for _, budget := range budgets {
				insns, err := asm.Assemble(tc.src)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				load := func() *vm.Program {
					// Each program its own global data.
					array, err := maps.New(&maps.Spec{Name: "global", Type: maps.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1})
					if err != nil {
						t.Fatal(err)
					}
					p, err := vm.Load(&vm.ProgramSpec{Name: tc.name, Instructions: insns, Maps: []vm.Map{array}},
						&vm.Options{Budget: budget})
					if err != nil {
						t.Fatalf("%s: %v", tc.name, err)
					}
					return p
				}
				p, q := load(), load()
				if !p.Lean() {
					t.Fatalf("%s: not lean", tc.name)
				}
				for run := range 3 { // the first from the pool, then from the cache
					want, wantMem := make([]byte, tc.mem), make([]byte, tc.mem)
					for i := range want {
						want[i], wantMem[i] = byte(i+run), byte(i+run)
					}
					env := vm.NewEnv()
					env.SetContext(wantMem)
					r0, err := q.Exec(env)
					gotMem := bytes.Clone(want)
					r1, err1 := p.Run(gotMem)
					what := fmt.Sprintf("%s, slice %d, budget %d, run %d", tc.name, slice, budget, run)
					if r0 != r1 || !bytes.Equal(wantMem, gotMem) {
						t.Errorf("%s: Run: %d, %v, %x; Exec: %d, %v, %x", what, r1, err1, gotMem, r0, err, wantMem)
					}
					if !sameError(err, wantMem, err1, gotMem) {
						t.Errorf("%s: Run: %v; Exec: %v", what, err1, err)
					}
					if tc.mem > 0 {
						ptrMem := bytes.Clone(want)
						r2, err2 := p.RunPointer(unsafe.Pointer(&ptrMem[0]), uintptr(len(ptrMem)))
						if r2 != r1 || !sameError(err2, ptrMem, err1, gotMem) || !bytes.Equal(ptrMem, gotMem) {
							t.Errorf("%s: RunPointer: %d, %v; Run: %d, %v", what, r2, err2, r1, err1)
						}
					}
				}
			}
		}
	}
}

// sameError reports whether a and b are the same error of runs on
// contexts ma and mb: fault addresses are compared as offsets from them.
func sameError(a error, ma []byte, b error, mb []byte) bool {
	var ra, rb *vm.RunError
	if !errors.As(a, &ra) || !errors.As(b, &rb) {
		return a == nil && b == nil
	}
	if ra.PC != rb.PC || ra.Size != rb.Size || ra.Err != rb.Err {
		return false
	}
	if ra.Addr == rb.Addr {
		return true
	}
	return len(ma) != 0 && ra.Addr-uint64(uintptrOf(ma)) == rb.Addr-uint64(uintptrOf(mb))
}

// Programs that call helpers (or may, through callx) do not run lean.
func TestLeanOnlyWithoutHelpers(t *testing.T) {
	hs := vm.Helpers{1: {Name: "one", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 1 }}}
	for _, tc := range []struct {
		src     string
		helpers vm.Helpers
		lean    bool
	}{
		{"mov %r0, 1\nexit", nil, true},
		{"mov %r0, 1\nexit", hs, true},
		{"call 1\nexit", hs, false},
		{"mov %r1, 1\ncall %r1\nexit", nil, true},
		{"mov %r1, 1\ncall %r1\nexit", hs, false},
	} {
		if got := mustLoad(t, tc.src, tc.helpers).Lean(); got != tc.lean {
			t.Errorf("%q with %d helpers: lean %v, want %v", tc.src, len(tc.helpers), got, tc.lean)
		}
	}
}

// The stack is not cleared between runs, but a run sees only what runs
// of its own program left there: more programs than a P's cache holds run
// from many goroutines at once, each reading the stack slot it then marks
// with its own number.
func TestLeanStacksStayPerProgram(t *testing.T) {
	const programs, goroutines, runs = 7, 8, 2000
	ps := make([]*vm.Program, programs)
	for i := range ps {
		// r0 = what the slot held; then the slot holds i+1. Every few
		// runs the program runs past the pinned chunk, so that its Env
		// leaves the cache and comes back.
		ps[i] = mustLoad(t, fmt.Sprintf(`
			ldxdw %%r0, [%%r10-8]
			stdw [%%r10-8], %d
			ldxb %%r3, [%%r1]
			jeq %%r3, 0, +3
			lddw %%r3, %d
			sub %%r3, 1
			jne %%r3, 0, -2
			exit`, i+1, vm.LeanChunk), nil)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			ctx := make([]byte, 1)
			for n := range runs {
				i := (g + n) % programs
				ctx[0] = byte(n % 97 / 96)
				r0, err := ps[i].Run(ctx)
				if err != nil || r0 != 0 && r0 != uint64(i+1) {
					t.Errorf("program %d: r0 = %d, %v", i, r0, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// The caches empty after a garbage collection and keep no program
// reachable.
func TestLeanCacheLetsProgramsGo(t *testing.T) {
	epoch := vm.GCEpoch()
	collected := make(chan struct{})
	func() {
		p := mustLoad(t, "ldxdw %r0, [%r1]\nexit", nil)
		mem := make([]byte, 8)
		for range 10 {
			if _, err := p.Run(mem); err != nil {
				t.Fatal(err)
			}
		}
		runtime.AddCleanup(p, func(ch chan struct{}) { close(ch) }, collected)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			if vm.GCEpoch() == epoch {
				t.Errorf("GC epoch still %d", epoch)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the program was not collected")
		}
	}
}

// A lean run's context is the size bytes it was given, writable.
func TestLeanRunPointer(t *testing.T) {
	p := mustLoad(t, "ldxdw %r0, [%r1]\nadd %r0, %r2\nstxdw [%r1], %r0\nexit", nil)
	var x uint64 = 40
	r0, err := p.RunPointer(unsafe.Pointer(&x), 8)
	if err != nil || r0 != 48 || x != 48 {
		t.Fatalf("r0 = %d, %v; x = %d", r0, err, x)
	}
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], 1)
	if _, err := p.RunPointer(unsafe.Pointer(&buf[0]), 4); !errors.Is(err, vm.ErrMemoryAccess) {
		t.Fatalf("a 4-byte context read as 8: %v", err)
	}
}
