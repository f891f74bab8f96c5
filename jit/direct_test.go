package jit_test

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
)

// directCases: which programs get a direct entry on amd64.
var directCases = []struct {
	name, src string
	opts      jit.Options
	direct    bool
	fallsIn   bool // the entry falls into the body (amd64)
}{
	{"filter", "ldxw %r2, [%r1+0]\nmov %r0, 0\njne %r2, 7, +1\nmov %r0, 1\nexit", jit.Options{Unchecked: true}, true, true},
	{"no memory, checked", "mov %r0, 3\nexit", jit.Options{}, true, true},
	{"no memory, unchecked", "mov %r0, 3\nexit", jit.Options{Unchecked: true}, true, true},
	{"memory, checked", "ldxw %r0, [%r1+0]\nexit", jit.Options{}, true, false},
	{"memory, checked, stores", "ldxw %r0, [%r1+0]\nstw [%r1+4], 1\nexit", jit.Options{}, false, false},
	{"division spills the budget", "ldxdw %r0, [%r1+0]\nldxdw %r3, [%r1+8]\ndiv %r0, %r3\nmod %r0, 7\nexit", jit.Options{Unchecked: true}, true, true},
	{"r8 and r9 (g and r15)", "ldxdw %r8, [%r1+0]\nmov %r9, %r8\nadd %r9, 1\nmov %r0, %r9\nxor %r8, %r8\nexit", jit.Options{Unchecked: true}, true, false},
	{"atomics spill the budget", "mov %r0, 0\nmov %r2, 1\nlock fetch add [%r1+0], %r2\nlock add [%r1+8], %r2\nmov %r0, %r2\nexit", jit.Options{Unchecked: true}, true, true},
	{"stack", "stdw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit", jit.Options{Unchecked: true}, false, false},
	{"loop", "mov %r0, 0\nadd %r0, 1\njlt %r0, 10, -2\nexit", jit.Options{Unchecked: true}, true, true},
	{"loop, r6", "mov %r6, 0\nadd %r6, 1\njlt %r6, 10, -2\nmov %r0, %r6\nexit", jit.Options{Unchecked: true}, false, false},
	{"helper", "call 1\nexit", jit.Options{Unchecked: true}, false, false},
}

func TestDirect(t *testing.T) {
	for _, tc := range directCases {
		t.Run(tc.name, func(t *testing.T) {
			vp := loadVM(t, tc.src, testHelpers)
			p := compile(t, vp, tc.opts)
			d := p.Direct()
			if want := tc.direct && runtime.GOARCH == "amd64"; (d != nil) != want {
				t.Fatalf("direct entry %v, want %v", d != nil, want)
			}
			if d == nil {
				return
			}
			// Where a call from Go lands: an entry that falls into the
			// body starts a 64-byte fetch block (code that crossed into a
			// second block before its ret made the shortest runs 17 %
			// slower); one that calls or jumps to it starts on a 16-byte
			// boundary.
			entry := **(**uintptr)(unsafe.Pointer(&d))
			code, off := jit.Code(p)
			body := uintptr(unsafe.Pointer(unsafe.SliceData(code))) + uintptr(off)
			if entry < body && entry%64 != 0 || entry > body && entry%16 != 0 || (entry < body) != tc.fallsIn {
				t.Errorf("direct entry at %#x, body at %#x, want one that falls into it: %v", entry, body, tc.fallsIn)
			}
			for i := range 200 {
				ctx := make([]byte, 16)
				for j := range ctx {
					ctx[j] = byte(rand.Uint32())
				}
				if i%3 == 0 {
					ctx[0] = 7
				}
				if i%5 == 0 {
					ctx[8] = 0 // division by zero
				}
				ctx2 := append([]byte(nil), ctx...)
				want, wantErr := vp.Run(ctx)
				got, err := d(ctx2)
				if got != want || (err == nil) != (wantErr == nil) || string(ctx) != string(ctx2) {
					t.Fatalf("ctx %x: Direct %d, %v; interpreter %d, %v", ctx, got, err, want, wantErr)
				}
			}
		})
	}
}

// A direct entry passes an empty context as r1 = 0, refuses one shorter
// than the proof's, and after Close returns ErrClosed.
func TestDirectContext(t *testing.T) {
	vp := loadVM(t, "mov %r0, %r1\njeq %r1, 0, +1\nldxw %r0, [%r1+4]\nexit", nil)
	res, err := verifier.Verify(vp, &verifier.Options{ContextSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	p := compile(t, vp, jit.Options{Verified: res})
	d := p.Direct()
	if d == nil {
		if runtime.GOARCH == "amd64" {
			t.Fatal("no direct entry")
		}
		t.Skip("no direct entry on " + runtime.GOARCH)
	}
	if r0, err := d([]byte{0, 0, 0, 0, 42, 0, 0, 0}); r0 != 42 || err != nil {
		t.Errorf("8-byte context: %d, %v; want 42", r0, err)
	}
	if _, err := d(make([]byte, 7)); !errors.Is(err, jit.ErrShortContext) {
		t.Errorf("7-byte context: %v, want ErrShortContext", err)
	}
	p.Close()
	if _, err := d(make([]byte, 8)); !errors.Is(err, jit.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}

	vp = loadVM(t, "mov %r0, %r1\nexit", nil)
	p = compile(t, vp, jit.Options{Unchecked: true})
	if r0, err := p.Direct()(nil); r0 != 0 || err != nil {
		t.Errorf("nil context: r1 = %#x, %v; want 0", r0, err)
	}
	if r0, err := p.Direct()(make([]byte, 0, 8)); r0 != 0 || err != nil {
		t.Errorf("empty context: r1 = %#x, %v; want 0", r0, err)
	}
}

// Direct's func keeps the program alive: its code is not unmapped while
// the func can still be called.
func TestDirectKeepsProgram(t *testing.T) {
	vp := loadVM(t, "mov %r0, 5\nexit", nil)
	p, err := jit.Compile(vp, &jit.Options{Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Direct()
	if d == nil {
		t.Skip("no direct entry on " + runtime.GOARCH)
	}
	p = nil
	for range 5 {
		runtime.GC()
		if r0, err := d(nil); r0 != 5 || err != nil {
			t.Fatalf("after GC: %d, %v", r0, err)
		}
	}
}

// Direct runs from many goroutines while the garbage collector runs: the
// entry must leave g (r14) and the stack as Go expects them.
func TestDirectConcurrentGC(t *testing.T) {
	vp := loadVM(t, "ldxdw %r8, [%r1+0]\nmov %r9, %r8\nmul %r9, 3\nmov %r0, %r9\nexit", nil)
	p := compile(t, vp, jit.Options{Unchecked: true})
	d := p.Direct()
	if d == nil {
		t.Skip("no direct entry on " + runtime.GOARCH)
	}
	stop := make(chan struct{})
	var gc sync.WaitGroup
	gc.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ctx := make([]byte, 8)
			for i := range 20000 {
				v := uint64(g*1000003 + i)
				for j := range 8 {
					ctx[j] = byte(v >> (8 * j))
				}
				if r0, err := d(ctx); r0 != v*3 || err != nil {
					t.Errorf("goroutine %d: %d, %v; want %d", g, r0, err, v*3)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	gc.Wait()
}

// The direct entry of code with loops runs it with one slice of its
// budget; a run that needs more continues in Go from the start, with the
// same result, or the same error when the whole budget runs out.
func TestDirectLongRun(t *testing.T) {
	const src = "ldxh %r2, [%r1+0]\nmov %r0, 0\nadd %r0, 3\njlt %r0, %r2, -2\nexit"
	for _, tc := range []struct {
		name   string
		slice  uint64 // 0: the normal sizes
		budget uint64
	}{
		{"within a slice", 0, 1 << 20},
		{"slices", 16, 1 << 20},
		{"budget", 16, 300},
		{"budget within a slice", 0, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer jit.SetSlice(tc.slice)()
			vp := loadBudget(t, tc.budget, src)
			p := compile(t, vp, jit.Options{Unchecked: true})
			d := p.Direct()
			if d == nil {
				if runtime.GOARCH == "amd64" {
					t.Fatal("no direct entry")
				}
				t.Skip("no direct entry on " + runtime.GOARCH)
			}
			for _, n := range []uint16{0, 1, 2, 3, 4, 100, 1000, 20000} {
				ctx := []byte{byte(n), byte(n >> 8), 0, 0}
				want, wantErr := vp.Run(ctx)
				got, err := d(ctx)
				if got != want || !sameError(err, wantErr) {
					t.Errorf("bound %d: Direct %d, %v; interpreter %d, %v", n, got, err, want, wantErr)
				}
				got, err = p.Run(ctx)
				if got != want || !sameError(err, wantErr) {
					t.Errorf("bound %d: Run %d, %v; interpreter %d, %v", n, got, err, want, wantErr)
				}
			}
		})
	}
}

// sameError reports whether a and b are both nil or the same message.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// Checked code that reads memory and stores nothing gets a direct entry
// whose failed checks continue in Go: a fault at any access, and a run
// longer than a slice, give exactly Run's result and error, and the
// interpreter's.
func TestDirectChecked(t *testing.T) {
	const (
		// Accesses of each size ending at bytes 1, 3, 7 and 15.
		sizes = "ldxb %r0, [%r1+0]\nldxh %r2, [%r1+1]\nadd %r0, %r2\nldxw %r2, [%r1+3]\nadd %r0, %r2\nldxdw %r2, [%r1+7]\nadd %r0, %r2\nexit"
		// Sums the first ctx[0] bytes, a byte at a time (a loop).
		sum = "ldxb %r3, [%r1+0]\nmov %r0, 0\nmov %r2, 0\nmov %r4, %r1\nadd %r4, %r2\nldxb %r5, [%r4+0]\nadd %r0, %r5\nadd %r2, 1\njlt %r2, %r3, -5\nexit"
		// Reads behind the context, and a guess far from it.
		before = "ldxb %r0, [%r1-1]\nexit"
		far    = "mov %r2, %r1\nadd %r2, 65536\nldxb %r0, [%r2+0]\nexit"
	)
	for _, tc := range []struct {
		name, src string
		slice     uint64
	}{
		{"sizes", sizes, 0}, {"loop", sum, 0}, {"loop in slices", sum, 16},
		// Only smaller loads: the hot region ends closer to the context's end.
		{"words", "ldxw %r2, [%r1+0]\nldxw %r0, [%r1+4]\nadd %r0, %r2\nexit", 0},
		{"bytes", "ldxb %r2, [%r1+3]\nldxb %r0, [%r1+5]\nadd %r0, %r2\nexit", 0},
		{"before the context", before, 0}, {"far from the context", far, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer jit.SetSlice(tc.slice)()
			vp := loadVM(t, tc.src, nil)
			p := compile(t, vp, jit.Options{})
			d := p.Direct()
			if d == nil {
				if runtime.GOARCH == "amd64" {
					t.Fatal("no direct entry")
				}
				t.Skip("no direct entry on " + runtime.GOARCH)
			}
			for n := range 48 {
				// What the programs read before the context or 64 KiB past
				// it must fault on every engine (guardedMem).
				ctx := guardedMemWithin(n, 128<<10)
				for i := range ctx {
					ctx[i] = byte(i*7 + 1)
				}
				if n > 0 {
					ctx[0] = byte(n + 2 - n%3) // the loop reads past the end for n%3 == 0
				}
				got, err := d(ctx)
				want, wantErr := p.Run(ctx)
				if got != want || !sameError(err, wantErr) {
					t.Fatalf("%d-byte context: Direct %d, %v; Run %d, %v", n, got, err, want, wantErr)
				}
				want, wantErr = vp.Run(ctx)
				if got != want || !sameError(err, wantErr) {
					t.Fatalf("%d-byte context: Direct %d, %v; interpreter %d, %v", n, got, err, want, wantErr)
				}
			}
			if got, err := d(nil); err == nil {
				t.Errorf("nil context: %d, nil error; want a fault", got)
			}
		})
	}
}
