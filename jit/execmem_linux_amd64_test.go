package jit

import (
	"bufio"
	"fmt"
	"os"
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

// Code pages are never writable and executable at once, closed code is no
// longer executable, and small spans are reused.
func TestCodePages(t *testing.T) {
	for _, size := range []int{1, pageSize, 3*pageSize + 5, (maxPooledPages + 2) * pageSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			code := make([]byte, size)
			for i := range code {
				code[i] = byte(i)
			}
			mem, err := mapCode(code)
			if err != nil {
				t.Fatal(err)
			}
			p := unsafe.Pointer(unsafe.SliceData(mem))
			if len(mem)%pageSize != 0 || len(mem) < size || string(mem[:size]) != string(code) || (len(mem) != size && mem[len(mem)-1] != 0xcc) {
				t.Fatalf("mapped %d bytes for %d, contents differ or tail is not int3", len(mem), size)
			}
			if got := perms(t, p); got != "r-xp" {
				t.Errorf("code pages %q, want r-xp", got)
			}
			unmapCode(mem)
			if got := perms(t, p); got != "" && got != "rw-p" {
				t.Errorf("closed code pages %q, want rw-p or unmapped", got)
			}
			again, err := mapCode(code)
			if err != nil {
				t.Fatal(err)
			}
			defer unmapCode(again)
			pooled := len(mem)/pageSize <= maxPooledPages
			if reused := unsafe.Pointer(unsafe.SliceData(again)) == p; pooled && !reused {
				t.Errorf("span of %d pages not reused", len(mem)/pageSize)
			}
			if got := perms(t, unsafe.Pointer(unsafe.SliceData(again))); got != "r-xp" {
				t.Errorf("code pages %q, want r-xp", got)
			}
		})
	}
}
