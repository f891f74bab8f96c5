package frontend

import (
	"slices"
	"testing"
)

func TestCopyLoops(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []CopyLoop
	}{{
		// clang -O2 -mcpu=v3: memcpy of 1 MiB within one buffer.
		name: "clang memcpy",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
add %r3, 0x100000
stxb [%r3+0], %r4
add %r2, 1
jeq %r2, 0x100000, out
ja l
out:
mov %r0, 0
exit`,
		want: []CopyLoop{{Head: 1, End: 8, Cost: 8, Size: 1, Counter: 2, DE: 1, Bound: 0x100000,
			SrcBases: 1<<1 | 1<<2, DstBases: 1<<1 | 1<<2, DstD: 0x100000, IVs: 1 << 2, Steps: [11]int32{2: 1}}},
	}, {
		name: "two pointers, words, jne back",
		src: `mov %r4, 0
l:
ldxw %r5, [%r1+4]
stxw [%r2-8], %r5
add %r1, 4
add %r2, 4
add %r4, 4
jne %r4, 64, l
mov %r0, 0
exit`,
		want: []CopyLoop{{Head: 1, End: 6, Cost: 6, Size: 4, Counter: 4, DE: 4, Bound: 64, Divisible: true,
			SrcBases: 1 << 1, SrcD: 4, DstBases: 1 << 2, DstD: -8, IVs: 1<<1 | 1<<2 | 1<<4, Steps: [11]int32{1: 4, 2: 4, 4: 4}}},
	}, {
		name: "jlt before the increment",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxdw %r4, [%r3+0]
stxdw [%r3+512], %r4
add %r2, 8
jlt %r2, 256, l
exit`,
		want: []CopyLoop{{Head: 1, End: 6, Cost: 6, Size: 8, Counter: 2, DE: 8, Bound: 256,
			SrcBases: 1<<1 | 1<<2, DstBases: 1<<1 | 1<<2, DstD: 512, IVs: 1 << 2, Steps: [11]int32{2: 8}}},
	}, {
		name: "fill with an immediate",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
sth [%r3+2], -1
add %r2, 2
jlt %r2, 256, l
exit`,
		want: []CopyLoop{{Head: 1, End: 5, Cost: 5, Size: 2, Counter: 2, DE: 2, Bound: 256,
			DstBases: 1<<1 | 1<<2, DstD: 2, IVs: 1 << 2, Steps: [11]int32{2: 2}, Fill: true, Value: -1, Imm: -1}},
	}, {
		name: "fill with a register",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
stxb [%r3+0], %r6
add %r2, 1
jne %r2, 256, l
exit`,
		want: []CopyLoop{{Head: 1, End: 5, Cost: 5, Size: 1, Counter: 2, DE: 1, Bound: 256,
			DstBases: 1<<1 | 1<<2, IVs: 1 << 2, Steps: [11]int32{2: 1}, Fill: true, Value: 6}},
	}, {
		name: "fill with a register the loop changes",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
stxb [%r3+0], %r6
add %r6, 1
add %r2, 1
jne %r2, 256, l
exit`,
	}, {
		name: "accumulator read before written",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
stxb [%r3+512], %r4
xor %r0, %r4
add %r2, 1
jlt %r2, 256, l
exit`,
	}, {
		name: "stored value changed",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
add %r4, 1
stxb [%r3+512], %r4
add %r2, 1
jlt %r2, 256, l
exit`,
	}, {
		name: "strided",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
stxb [%r3+512], %r4
add %r2, 2
jlt %r2, 256, l
exit`,
	}, {
		name: "sizes differ",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxh %r4, [%r3+0]
stxb [%r3+512], %r4
add %r2, 2
jlt %r2, 256, l
exit`,
	}, {
		name: "store before load",
		src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
stxb [%r3+512], %r4
ldxb %r4, [%r3+0]
add %r2, 1
jlt %r2, 256, l
exit`,
	}, {
		name: "jump into the body",
		src: `mov %r2, 0
ja in
l:
mov %r3, %r1
add %r3, %r2
in:
ldxb %r4, [%r3+0]
stxb [%r3+512], %r4
add %r2, 1
jlt %r2, 256, l
exit`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{Idioms: true, Hoist: true}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Copies, tc.want) {
				t.Errorf("copies\n%+v, want\n%+v", a.Copies, tc.want)
			}
			var off Analysis
			if err := off.Analyze(load(t, tc.src), Options{}); err != nil {
				t.Fatal(err)
			}
			if len(off.Copies) != 0 {
				t.Errorf("copies found without Options.Idioms")
			}
		})
	}
}
