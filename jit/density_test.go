//go:build linux

package jit_test

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// TestCodeDensity writes, for every program of the benchmark set's
// objects, the machine instructions its body spends per eBPF instruction
// (the straight-line code of each slot, without the out-of-line paths
// and hoisted loops' unchecked copies), checked and unchecked, as a
// Markdown table to $UEBPF_DENSITY. It is how BENCHMARKS.md compares the
// back ends where timing one under an emulator would say nothing
// (GOARCH=arm64 go test -c, run under qemu-aarch64-static).
func TestCodeDensity(t *testing.T) {
	out := os.Getenv("UEBPF_DENSITY")
	if out == "" || !jit.Supported {
		t.Skip("set UEBPF_DENSITY")
	}
	var s strings.Builder
	fmt.Fprintf(&s, "| program (%s) | eBPF instructions | checked: machine instructions | per eBPF instruction | unchecked: machine instructions | per eBPF instruction |\n|---|---:|---:|---:|---:|---:|\n", runtime.GOARCH)
	var ratios [2][]float64
	setPrograms(t, func(name string, vp *vm.Program) {
		slots := len(vp.Instructions())
		fmt.Fprintf(&s, "| %s | %d |", name, slots)
		for i, opts := range []jit.Options{{}, {Unchecked: true}} {
			code, offsets, end, err := jit.SlotSizes(vp, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			n := 0
			for pc := range offsets {
				next := end
				if pc+1 < len(offsets) {
					next = int(offsets[pc+1])
				}
				if next < int(offsets[pc]) {
					t.Fatalf("%s: slot %d at %d ends at %d", name, pc, offsets[pc], next)
				}
				k, err := countInsns(code[offsets[pc]:next])
				if err != nil {
					t.Fatalf("%s: slot %d: %v", name, pc, err)
				}
				n += k
			}
			r := float64(n) / float64(slots)
			ratios[i] = append(ratios[i], r)
			fmt.Fprintf(&s, " %d | %.2f |", n, r)
		}
		s.WriteString("\n")
	})
	fmt.Fprintf(&s, "| **geomean** | | | **%.2f** | | **%.2f** |\n", geomean(ratios[0]), geomean(ratios[1]))
	if err := os.WriteFile(out, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	l := 0.0
	for _, x := range xs {
		l += math.Log(x)
	}
	return math.Exp(l / float64(len(xs)))
}
