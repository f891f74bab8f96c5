package jit_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/jit"
)

// TestLoadsStores covers every load and store size on the stack and the
// context, sign-extending loads, immediates, and accesses just inside and
// just outside both (checked modes only for those).
func TestLoadsStores(t *testing.T) {
	type access struct {
		base string
		off  int
	}
	inside := []access{{"%r10", -8}, {"%r10", -512}, {"%r10", -1}, {"%r1", 0}, {"%r1", 56}, {"%r1", 63}, {"%r1", 3}, {"%r6", -16}}
	outside := []access{{"%r10", 0}, {"%r10", -4097}, {"%r1", 64}, {"%r1", -1}, {"%r1", 1000}, {"%r6", 4096}, {"%r7", 0}}
	for _, size := range []string{"b", "h", "w", "dw"} {
		n := map[string]int{"b": 1, "h": 2, "w": 4, "dw": 8}[size]
		for _, a := range append(inside, outside...) {
			off := a.off
			if a.off == 63 || a.off == -1 {
				off = a.off - n + 1 // the last n bytes
			}
			in := false
			for _, i := range inside {
				in = in || i == a
			}
			modes := allModes
			if !in {
				modes = checkedModes
			}
			for _, op := range []string{"ldx" + size, "ldxs" + size, "stx" + size, "st" + size} {
				if op == "ldxsdw" {
					continue
				}
				name := fmt.Sprintf("%s_%s%+d", op, strings.TrimPrefix(a.base, "%"), off)
				t.Run(name, func(t *testing.T) {
					var body string
					mem := fmt.Sprintf("[%s%+d]", a.base, off)
					switch {
					case strings.HasPrefix(op, "ldx"):
						body = fmt.Sprintf("%s %%r0, %s", op, mem)
					case strings.HasPrefix(op, "stx"):
						body = fmt.Sprintf("%s %s, %%r3", op, mem)
					default:
						body = fmt.Sprintf("%s %s, -2023406815", op, mem) // 0x87654321
					}
					src := fmt.Sprintf(`
						lddw %%r3, 0x8877665544332211
						stxdw [%%r10-8], %%r3
						stxdw [%%r10-512], %%r3
						mov %%r6, %%r10
						lddw %%r7, 0x10
						%s
						exit`, body)
					mem64 := make([]byte, 64)
					for i := range mem64 {
						mem64[i] = byte(0x80 + i)
					}
					diffSource(t, src, diffInput{mem: mem64}, modes)
				})
			}
		}
	}
}

// TestAtomics covers every atomic operation in both sizes with r0 as
// source and as the implicit cmpxchg operand, and misaligned and
// out-of-bounds atomics.
// llscModes force the load/store-exclusive loops for atomics where the
// back end also has single instructions (arm64 with LSE); the first is
// checked.
var llscModes = func() []jit.Options {
	if runtime.GOARCH != "arm64" {
		return nil
	}
	return []jit.Options{{ARM64: jit.ARM64Options{ForceLLSC: true}}, {ARM64: jit.ARM64Options{ForceLLSC: true}, Unchecked: true}}
}()

func TestAtomics(t *testing.T) {
	ops := []string{"lock add", "lock fetch add", "lock or", "lock fetch or", "lock and", "lock fetch and",
		"lock xor", "lock fetch xor", "lock xchg", "lock cmpxchg"}
	for _, op := range ops {
		for _, w := range []string{"", "32"} {
			for _, src := range []string{"%r0", "%r2", "%r5"} {
				for _, where := range []string{"[%r10-16]", "[%r1+8]", "[%r1+3]", "[%r1+64]", "[%r10+8]"} {
					faults := where == "[%r1+3]" || where == "[%r1+64]" || where == "[%r10+8]"
					modes := append(slices.Clone(allModes), llscModes...)
					if faults {
						modes = append(slices.Clone(checkedModes), llscModes[:min(1, len(llscModes))]...)
					}
					name := fmt.Sprintf("%s%s_%s_%s", strings.ReplaceAll(op, " ", "_"), w, src, where)
					t.Run(name, func(t *testing.T) {
						for _, r0 := range []string{"0x1122334455667788", "0x2211"} {
							prog := fmt.Sprintf(`
								lddw %%r3, 0x1122334455667788
								stxdw [%%r10-16], %%r3
								stxdw [%%r1+8], %%r3
								lddw %%r0, %s
								lddw %%r2, 0xf0f0f0f0f0f0f0f0
								lddw %%r5, 0x0102030405060708
								%s%s %s, %s
								stxdw [%%r1+16], %%r0
								stxdw [%%r1+24], %%r2
								stxdw [%%r1+32], %%r5
								exit`, r0, op, w, where, src)
							diffSource(t, prog, diffInput{mem: make([]byte, 64)}, modes)
						}
					})
				}
			}
		}
	}
}

// TestPacketLoads covers LD_ABS and LD_IND in every size, inside, at the
// edge of and outside the packet, with negative offsets.
func TestPacketLoads(t *testing.T) {
	pkt := []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa}
	for _, size := range []string{"b", "h", "w"} {
		for _, imm := range []int{0, 1, 6, 7, 9, 10, -1, 100} {
			t.Run(fmt.Sprintf("ldabs%s_%d", size, imm), func(t *testing.T) {
				diffSource(t, fmt.Sprintf("mov %%r0, 7\nldabs%s %d\nexit", size, imm), diffInput{packet: pkt}, allModes)
			})
			for _, reg := range []int{0, 3, 0x7fffffff, -2} {
				t.Run(fmt.Sprintf("ldind%s_%d_%d", size, reg, imm), func(t *testing.T) {
					prog := fmt.Sprintf("mov %%r0, 7\nmov %%r3, %d\nldind%s %%r3, %d\nadd %%r0, 1\nexit", reg, size, imm)
					diffSource(t, prog, diffInput{packet: pkt}, allModes)
				})
			}
		}
	}
}
