package arm64

import (
	"math"
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// call runs the machine code at code, which must return with RET, and
// returns what it left in X0 (exec_linux_arm64.s).
func call(code uintptr) uint64

// execPage is a page of machine code, mapped read-write while written and
// read-execute while run (W^X).
type execPage struct {
	mem []byte
}

func newExecPage(t *testing.T) *execPage {
	mem, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	return &execPage{mem}
}

// run copies code in, makes the page executable and calls it.
func (p *execPage) run(t *testing.T, code []byte) uint64 {
	t.Helper()
	if err := unix.Mprotect(p.mem, unix.PROT_READ|unix.PROT_WRITE); err != nil {
		t.Fatal(err)
	}
	copy(p.mem, code)
	if err := unix.Mprotect(p.mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		t.Fatal(err)
	}
	start := uintptr(unsafe.Pointer(&p.mem[0]))
	SyncICache(start, start+uintptr(len(code)))
	return call(start)
}

// TestExecute runs encoder output on the CPU (under qemu-aarch64 on this
// project's amd64 machines): the smallest function, then constants,
// division corner cases, a frame on SP, loads and stores, and both kinds
// of atomics on a data page.
func TestExecute(t *testing.T) {
	page := newExecPage(t)
	a := NewAsm(64)

	a.Emit(must(Movz(8, X0, 42, 0)))
	a.Emit(Ret())
	if got := page.run(t, a.Bytes()); got != 42 {
		t.Fatalf("movz x0, #42; ret returned %d", got)
	}

	for _, v := range []uint64{0, 1, 0xffff, 0x12340000, ^uint64(0), 0x123456789abcdef0, 0x5555555555551234, 0xffffffff00000000, 1 << 63} {
		for _, size := range []int{4, 8} {
			a.Reset()
			a.Emit(must(Movn(8, X0, 0, 0))) // all ones, so a 32-bit move must clear the top
			a.MovConst(size, X0, v)
			a.Emit(Ret())
			want := v
			if size == 4 {
				want &= math.MaxUint32
			}
			if got := page.run(t, a.Bytes()); got != want {
				t.Errorf("MovConst(%d, %#x) gave %#x", size, v, got)
			}
		}
	}

	// eBPF division: by zero gives 0, INT_MIN/-1 gives INT_MIN, neither
	// traps; the remainder comes from MSUB.
	divs := []struct {
		name  string
		n, d  uint64
		emit  func()
		wantV uint64
	}{
		{"udiv by 0", 7, 0, func() { a.Emit(Udiv(8, X0, X1, X2)) }, 0},
		{"sdiv min/-1", 1 << 63, ^uint64(0), func() { a.Emit(Sdiv(8, X0, X1, X2)) }, 1 << 63},
		{"sdiv32 min/-1", 1 << 31, math.MaxUint32, func() { a.Emit(Sdiv(4, X0, X1, X2)) }, 1 << 31},
		{"umod", 100, 7, func() { a.Emit(Udiv(8, X3, X1, X2)); a.Emit(Msub(8, X0, X3, X2, X1)) }, 2},
		{"smod", uint64(1<<64 - 100), 7, func() { a.Emit(Sdiv(8, X3, X1, X2)); a.Emit(Msub(8, X0, X3, X2, X1)) }, uint64(1<<64 - 2)},
	}
	for _, d := range divs {
		a.Reset()
		a.MovConst(8, X1, d.n)
		a.MovConst(8, X2, d.d)
		d.emit()
		a.Emit(Ret())
		if got := page.run(t, a.Bytes()); got != d.wantV {
			t.Errorf("%s: %#x", d.name, got)
		}
	}

	// A frame record on SP, a local in it, and register 31 as XZR.
	a.Reset()
	a.Emit(must(Stp(8, X29, X30, SP, -32, PreIndex)))
	a.Emit(Mov(8, X29, SP))
	a.MovConst(8, X1, 0x1122334455667788)
	a.Emit(must(Store(8, X1, SP, 16)))
	a.Emit(must(Store(4, XZR, SP, 16))) // clear the low word
	a.Emit(must(Load(8, X0, X29, 16)))
	a.Emit(must(LoadSX(1, X2, SP, 23))) // 0x11, positive
	a.Emit(ALUReg(ADD, 8, X0, X0, X2))
	a.Emit(must(Ldp(8, X29, X30, SP, 32, PostIndex)))
	a.Emit(Ret())
	if got := page.run(t, a.Bytes()); got != 0x1122334400000000+0x11 {
		t.Errorf("frame test: %#x", got)
	}

	// Atomics on a data page: LSE, then an LL/SC loop.
	data, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	addr := uint64(uintptr(unsafe.Pointer(&data[0])))
	word := (*uint64)(unsafe.Pointer(&data[0]))
	*word = 40

	if cpu.ARM64.HasATOMICS {
		a.Reset()
		a.MovConst(8, X1, addr)
		a.Emit(must(Movz(8, X2, 2, 0)))
		a.Emit(must(Atomic(LDADD, AcqRel, 8, X2, X0, X1)))
		a.Emit(Ret())
		if got := page.run(t, a.Bytes()); got != 40 || *word != 42 {
			t.Errorf("ldaddal: fetched %d, memory %d", got, *word)
		}

		a.Reset()
		a.MovConst(8, X1, addr)
		a.Emit(must(Movz(8, X0, 42, 0))) // expected
		a.Emit(must(Movz(8, X2, 7, 0)))  // new
		a.Emit(must(Cas(AcqRel, 8, X0, X2, X1)))
		a.Emit(Ret())
		if got := page.run(t, a.Bytes()); got != 42 || *word != 7 {
			t.Errorf("casal: old %d, memory %d", got, *word)
		}
	} else {
		t.Log("CPU without LSE atomics: LDADD and CAS not run")
		*word = 7
	}

	a.Reset()
	a.MovConst(8, X1, addr)
	loop := a.Len()
	a.Emit(must(Ldxr(true, 8, X0, X1)))
	a.Emit(must(AddImm(8, X3, X0, 5)))
	a.Emit(must(Stxr(true, 8, X4, X3, X1)))
	a.Emit(must(Cbnz(4, X4, int64(loop-a.Len()))))
	a.Emit(Ret())
	if got := page.run(t, a.Bytes()); got != 7 || *word != 12 {
		t.Errorf("ldaxr/stlxr: old %d, memory %d", got, *word)
	}

	// A forward branch patched after the fact, and a conditional select.
	a.Reset()
	a.Emit(must(Movz(8, X0, 1, 0)))
	a.Emit(must(CmpImm(8, X0, 1)))
	skip := a.Len()
	a.Emit(must(BCond(NE, 0)))
	a.Emit(must(Cset(8, X0, EQ)))
	a.Emit(must(AddImm(8, X0, X0, 10)))
	if err := a.PatchBranch(skip, a.Len()); err != nil {
		t.Fatal(err)
	}
	a.Emit(Ret())
	if got := page.run(t, a.Bytes()); got != 11 {
		t.Errorf("branch and cset: %d", got)
	}
}
