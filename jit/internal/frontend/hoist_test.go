package frontend

import (
	"slices"
	"testing"
)

// The front end's part of hoisting: which loops, their counters and exit
// tests, which accesses and the ranges they reach. (jit's hoist tests run
// the code of both copies against the interpreter.)
func TestHoists(t *testing.T) {
	const inner = `mov %r6, 0
mov %r0, 0
outer:
mov %r2, 0
inner:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
add %r0, %r4
add %r2, 1
jlt %r2, 64, inner
add %r6, 1
jlt %r6, 4, outer
exit`
	for _, tc := range []struct {
		name    string
		src     string
		opts    Options
		hoists  []Hoist
		ranges  []HoistRange
		hoisted []int
	}{{
		name: "byte copy",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
stxb [%r3+32], %r4
add %r2, 1
jlt %r2, 32, l
mov %r0, 0
exit`,
		opts:   Options{Hoist: true},
		hoists: []Hoist{{Head: 1, End: 6, Entry: 1, IV: true, Counter: 2, DE: 1, Bound: 32, Step: 1, Ranges: [2]int32{0, 2}}},
		// The test follows the increment (DE 1). r1 + counter + [0, 31]
		// read, [32, 63] written; HiM8 is the last 8-byte window's start.
		ranges:  []HoistRange{{Bases: 1 << 1, IV: true, Lo: 0, HiM8: 31 - 7}, {Bases: 1 << 1, IV: true, Write: true, Lo: 32, HiM8: 63 - 7}},
		hoisted: []int{3, 4},
	}, {
		name:    "inner loop of two",
		src:     inner,
		opts:    Options{Hoist: true},
		hoists:  []Hoist{{Head: 3, End: 8, Entry: 3, IV: true, Counter: 2, DE: 1, Bound: 64, Step: 1, Ranges: [2]int32{0, 1}}},
		ranges:  []HoistRange{{Bases: 1 << 1, IV: true, Lo: 0, HiM8: 63 - 7}},
		hoisted: []int{5},
	}, {
		name: "off",
		src:  inner,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), tc.opts); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Hoists, tc.hoists) {
				t.Errorf("hoists %+v, want %+v", a.Hoists, tc.hoists)
			}
			if !slices.Equal(a.HoistRanges, tc.ranges) {
				t.Errorf("ranges %+v, want %+v", a.HoistRanges, tc.ranges)
			}
			if got := marked(a.Hoisted); !slices.Equal(got, tc.hoisted) {
				t.Errorf("hoisted %v, want %v", got, tc.hoisted)
			}
			for _, l := range a.Hoists {
				if end := int(l.End) + 1; end < len(a.Starts) && !a.Starts[end] {
					t.Errorf("slot %d after the loop starts no block", end)
				}
			}
		})
	}
}
