//go:build linux && (amd64 || arm64)

package execmem

import (
	"fmt"
	"testing"
	"unsafe"
)

// Code lands in the 128 GiB region of the Go code that calls it, small
// slots and large code of its own alike, where that region has room.
func TestMapNearGoCode(t *testing.T) {
	for _, size := range []int{100, 1<<maxShift + 1} {
		mem, err := Map(pattern(size, 1))
		if err != nil {
			t.Fatal(err)
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
		if p&^(placementRegion-1) != goCode&^(placementRegion-1) {
			t.Errorf("%d bytes of code at %#x, outside the region of the Go code at %#x", size, p, goCode)
		}
		Unmap(mem)
	}
}

func TestPlacementStart(t *testing.T) {
	for _, tt := range []struct {
		pc, want uintptr
	}{
		{0x401234, 0x401234 + placementOffset - 0x234},                         // non-PIE: above the text
		{0x555d92d553a0, 0x555d92d55000 + placementOffset},                     // PIE, room above
		{0x555ff0000123, 0x555ff0000000 - placementOffset},                     // PIE at its region's top: below
		{placementRegion - 0x1000, placementRegion - 0x1000 - placementOffset}, // top of the first region
	} {
		t.Run(fmt.Sprintf("%#x", tt.pc), func(t *testing.T) {
			if got := placementStart(tt.pc); got != tt.want {
				t.Errorf("placementStart(%#x) = %#x, want %#x", tt.pc, got, tt.want)
			}
		})
	}
}
