//go:build linux && (amd64 || arm64)

package execmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// perms returns the permissions /proc/self/maps gives the page at p, or ""
// when it is not mapped.
func perms(t *testing.T, p unsafe.Pointer) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps:", err)
	}
	defer f.Close()
	addr := uintptr(p)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var lo, hi uintptr
		var perm string
		if _, err := fmt.Sscanf(sc.Text(), "%x-%x %s", &lo, &hi, &perm); err == nil && addr >= lo && addr < hi {
			return perm
		}
	}
	return ""
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i) ^ seed
	}
	return b
}

// Code is never writable, a freed slot holds traps and is reused by the
// next code of its size, and large code gets a mapping of its own that
// Unmap removes.
func TestMap(t *testing.T) {
	if !sharedCode {
		t.Skip("code is not shared on " + runtime.GOARCH)
	}
	for _, size := range []int{1, 256, 257, pageSize, 3*pageSize + 5, 1 << maxShift, 1<<maxShift + 1, 300 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			code := pattern(size, 0)
			mem, err := Map(code)
			if err != nil {
				t.Fatal(err)
			}
			p := unsafe.Pointer(unsafe.SliceData(mem))
			slot := max(256, 1<<(len(fmt.Sprintf("%b", size-1))))
			if size > 1<<maxShift {
				slot = (size + pageSize - 1) &^ (pageSize - 1)
			}
			if len(mem) != size || cap(mem) != slot {
				t.Fatalf("mapped %d bytes in a slot of %d for %d (want a slot of %d)", len(mem), cap(mem), size, slot)
			}
			if !bytes.Equal(mem, code) || bytes.Count(mem[size:slot], []byte{fillByte}) != slot-size {
				t.Fatalf("contents differ or the tail does not trap")
			}
			if uintptr(p)%uintptr(min(slot, pageSize)) != 0 {
				t.Errorf("slot at %p not aligned to %d", p, min(slot, pageSize))
			}
			if got := perms(t, p); got != "r-xs" {
				t.Errorf("code pages %q, want r-xs", got)
			}
			Unmap(mem)
			if size > 1<<maxShift {
				if got := perms(t, p); got != "" {
					t.Errorf("unmapped large code still mapped %q", got)
				}
			} else if bytes.Count(mem[:slot], []byte{fillByte}) != slot {
				t.Errorf("freed slot still holds code")
			}
			again, err := Map(pattern(size, 0x5a))
			if err != nil {
				t.Fatal(err)
			}
			defer Unmap(again)
			if reused := unsafe.Pointer(unsafe.SliceData(again)) == p; size <= 1<<maxShift && !reused {
				t.Errorf("slot of %d bytes not reused", len(mem))
			}
			if !bytes.Equal(again[:size], pattern(size, 0x5a)) {
				t.Errorf("reused slot holds other bytes")
			}
		})
	}
}

// Programs are loaded and closed from many goroutines at once; each sees
// its own code, whole.
func TestMapConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				size := 1 + (i*37+g*101)%5000
				code := pattern(size, byte(g))
				mem, err := Map(code)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(mem[:size], code) {
					t.Errorf("goroutine %d: code of %d bytes differs", g, size)
				}
				Unmap(mem)
			}
		})
	}
	wg.Wait()
}

// Without a usable memory file, code gets private pages, read-execute.
func TestMapPrivate(t *testing.T) {
	code := pattern(100, 7)
	mem, err := mapPrivate(code)
	if err != nil {
		t.Fatal(err)
	}
	p := unsafe.Pointer(unsafe.SliceData(mem))
	if len(mem) != 100 || cap(mem) != pageSize || !bytes.Equal(mem, code) || mem[:pageSize][pageSize-1] != fillByte {
		t.Fatalf("private mapping of %d bytes (%d mapped) wrong", len(mem), cap(mem))
	}
	if got := perms(t, p); got != "r-xp" {
		t.Errorf("private code pages %q, want r-xp", got)
	}
	Unmap(mem)
	if got := perms(t, p); got != "" {
		t.Errorf("unmapped private code still mapped %q", got)
	}
}

func BenchmarkMap(b *testing.B) {
	code := pattern(600, 1)
	for b.Loop() {
		mem, err := Map(code)
		if err != nil {
			b.Fatal(err)
		}
		Unmap(mem)
	}
}
