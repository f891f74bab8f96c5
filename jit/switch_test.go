package jit_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// switchSource builds a program that loads a value from the context and
// dispatches on it through a compare tree as clang lowers a switch: a
// binary search with split (e.g. "jsgt") down to runs of at most two
// cases, tested with jeq, then a jump to the default. Each case and the
// default set r0 to a value of their own.
func switchSource(split, width string, cases []int64) string {
	var s strings.Builder
	s.WriteString("ldxdw %r2, [%r1+0]\nmov %r0, 0\nmov %r3, 7\n")
	label := 0
	var tree func(lo, hi int)
	tree = func(lo, hi int) {
		if hi-lo <= 2 {
			for i := lo; i < hi; i++ {
				fmt.Fprintf(&s, "jeq%s %%r2, %d, case%d\n", width, cases[i], i)
			}
			s.WriteString("ja default\n")
			return
		}
		mid := (lo + hi) / 2
		label++
		right := label
		fmt.Fprintf(&s, "%s%s %%r2, %d, right%d\n", split, width, cases[mid-1], right)
		tree(lo, mid)
		fmt.Fprintf(&s, "right%d:\n", right)
		tree(mid, hi)
	}
	tree(0, len(cases))
	for i := range cases {
		fmt.Fprintf(&s, "case%d:\nmov %%r0, %d\nadd %%r0, %%r3\nexit\n", i, 100+i)
	}
	s.WriteString("default:\nmov %r0, 1\nexit\n")
	return s.String()
}

// TestSwitchTables compares the engines on compare trees the JIT turns
// into jump tables (and some it must not), for every value around the
// cases, in both widths, and with every budget from 1 to past the
// dispatch: the charge of a dispatch, and the failure of one the budget
// cannot pay, must be the interpreter's to the slot.
func TestSwitchTables(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	seq := func(from, n, step int64) []int64 {
		var v []int64
		for i := range n {
			v = append(v, from+i*step)
		}
		return v
	}
	tests := []struct {
		name  string
		split string
		width string
		cases []int64
		table bool
	}{
		{"signed32_dense", "jsgt", "32", seq(0, 31, 1), true},
		{"signed64_negative", "jsgt", "", seq(-20, 12, 1), true},
		{"unsigned64", "jgt", "", seq(3, 9, 1), true},
		{"unsigned32_gaps", "jgt", "32", seq(10, 8, 3), true},
		{"signed32_around_zero", "jsgt", "32", seq(-4, 9, 1), true},
		{"unsigned64_negative", "jgt", "", seq(-6, 12, 1), true},
		{"sparse", "jsgt", "", seq(0, 8, 1000), false},
		{"too_few", "jsgt", "", seq(0, 2, 1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := switchSource(tc.split, tc.width, tc.cases)
			insns, err := asm.Assemble(src)
			if err != nil {
				t.Fatalf("assemble: %v\n%s", err, src)
			}
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := compile(t, vp, jit.Options{})
			if got := hasJumpTable(t, p); jit.Optimised && got != tc.table {
				t.Fatalf("jump table: %v, want %v", got, tc.table)
			}
			p.Close()
			// Each case, its neighbours and the values past the ends,
			// also with other upper halves.
			var values []uint64
			for _, c := range tc.cases {
				for v := c - 3; v <= c+3; v++ {
					if !slices.Contains(values, uint64(v)) {
						values = append(values, uint64(v), uint64(v)+1<<32, uint64(v)^1<<63)
					}
				}
			}
			values = append(values, math.MaxUint64, math.MaxInt64, 1<<31, 1<<32)
			for _, v := range values {
				mem := binary.LittleEndian.AppendUint64(nil, v)
				for budget := range uint64(24) { // 0: the default budget
					if err := diffEngines(vp, diffInput{mem: mem, budget: budget}, tableModes...); err != nil {
						t.Fatalf("value %#x, budget %d: %v\n%s", v, budget, err, src)
					}
				}
			}
		})
	}
}

// TestSwitchBenchProgram runs the benchmark set's switch, whose tree the
// JIT compiles to a table, on random bytes with budgets that run out at
// every point of the first iterations and at the end.
func TestSwitchBenchProgram(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	coll, err := elf.Load("../internal/benchset/c/switch.bpf.o", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	vp := coll.Program("switch_loop").VM
	if jit.Optimised && !hasJumpTable(t, compile(t, vp, jit.Options{Unchecked: true})) {
		t.Fatal("no jump table for the switch")
	}
	in := make([]byte, 1024)
	x := uint32(7)
	for i := range in {
		x = x*1664525 + 1013904223
		in[i] = byte(x >> 24)
	}
	var budgets []uint64
	for b := range uint64(200) {
		budgets = append(budgets, b)
	}
	env, mem := vm.NewEnv(), make([]byte, len(in))
	env.SetContext(mem)
	n := runOutcome(vp, env, mem, diffInput{mem: in}, nil).executed
	budgets = append(budgets, n/2, n-1, n, n+1)
	for _, b := range budgets {
		if err := diffEngines(vp, diffInput{mem: in, budget: b}, tableModes...); err != nil {
			t.Fatalf("budget %d: %v", b, err)
		}
	}
}
