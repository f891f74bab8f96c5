package frontend

import "testing"

// strcmpLoop is clang's rotated strcmp loop (the benchmark set's), with
// test standing for its zero test.
func strcmpLoop(test string) string {
	return `mov %r3, 0
mov %r0, 0
ja body
loop:
` + test + `
mov %r3, %r2
add %r3, 1
jne %r2, 4095, body
done:
exit
body:
mov %r2, %r3
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+4096]
ldxb %r3, [%r3+0]
jeq32 %r3, %r4, loop
sub32 %r3, %r4
mov32 %r0, %r3
ja done`
}

func TestCompareLoops(t *testing.T) {
	strcmp := CopyLoop{Head: 8, End: 6, Cost: 10, Size: 1, Counter: 3, Bound: 4095,
		SrcBases: 1<<1 | 1<<3, SrcD: 4096, DstBases: 1<<1 | 1<<3, IVs: 1 << 3, Compare: true, Zero: true}
	strcmp.Steps[3] = 1
	memcmp := CopyLoop{Head: 1, End: 7, Cost: 7, Size: 1, Counter: 2, DE: 1, Bound: 100,
		SrcBases: 1<<1 | 1<<2, DstBases: 1<<1 | 1<<2, DstD: 200, IVs: 1 << 2, Compare: true}
	memcmp.Steps[2] = 1
	tempsLoop := CopyLoop{Head: 6, End: 4, Cost: 9, Size: 1, Counter: 9, Bound: 29,
		SrcBases: 1<<7 | 1<<9, SrcD: 74, DstBases: 1<<7 | 1<<9, DstD: 74, IVs: 1 << 9, Compare: true}
	tempsLoop.Steps[9] = 1
	halfwords := CopyLoop{Head: 1, End: 7, Cost: 7, Size: 2, Counter: 2, DE: 2, Bound: 100,
		SrcBases: 1<<1 | 1<<2, DstBases: 1<<1 | 1<<2, DstD: 200, IVs: 1 << 2, Compare: true}
	halfwords.Steps[2] = 2
	for _, tc := range []struct {
		name string
		src  string
		want []CopyLoop
	}{
		{name: "strcmp", src: strcmpLoop("jeq32 %r3, 0, done"), want: []CopyLoop{strcmp}},
		{name: "a test against 7", src: strcmpLoop("jeq32 %r3, 7, done")},
		{name: "a test of the counter", src: strcmpLoop("jeq %r2, 7, done")},
		{name: "memcmp", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
ldxb %r5, [%r3+200]
jne %r4, %r5, out
add %r2, 1
jlt %r2, 100, l
out:
exit`, want: []CopyLoop{memcmp}},
		{name: "a store", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
ldxb %r5, [%r3+200]
stxb [%r3+400], %r5
jne %r4, %r5, out
add %r2, 1
jlt %r2, 100, l
out:
exit`},
		{name: "a value from the last iteration", src: `mov %r2, 0
mov %r6, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
ldxb %r5, [%r3+200]
add %r6, %r4
jne %r4, %r5, out
add %r2, 1
jlt %r2, 100, l
out:
mov %r0, %r6
exit`},
		// Entered at l, the path from m would leave at the bound test
		// with r5, r2 and r4 of the iteration before: the loop's head
		// is l, where they are written before every exit.
		{name: "temporaries before every exit", src: `mov %r9, 0
ja l
m:
mov %r9, %r3
add %r9, 1
jne %r3, 29, l
ja out
l:
mov %r3, %r9
mov %r5, %r7
add %r5, %r3
ldxb %r2, [%r5+74]
ldxb %r4, [%r5+74]
jeq %r2, %r4, m
out:
exit`, want: []CopyLoop{tempsLoop}},
		{name: "halfwords", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxh %r4, [%r3+0]
ldxh %r5, [%r3+200]
jne %r4, %r5, out
add %r2, 2
jlt %r2, 100, l
out:
exit`, want: []CopyLoop{halfwords}},
		{name: "double words compared in 32 bits", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxdw %r4, [%r3+0]
ldxdw %r5, [%r3+200]
jne32 %r4, %r5, out
add %r2, 8
jlt %r2, 100, l
out:
exit`},
		{name: "double words with a zero test", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxdw %r4, [%r3+0]
ldxdw %r5, [%r3+200]
jne %r4, %r5, out
jeq %r4, 0, out
add %r2, 8
jlt %r2, 100, l
out:
exit`},
		{name: "loads of two sizes", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxw %r4, [%r3+0]
ldxh %r5, [%r3+200]
jne %r4, %r5, out
add %r2, 4
jlt %r2, 100, l
out:
exit`},
		{name: "words advancing by one", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxw %r4, [%r3+0]
ldxw %r5, [%r3+200]
jne %r4, %r5, out
add %r2, 1
jlt %r2, 100, l
out:
exit`},
		{name: "no bound", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r4, [%r3+0]
ldxb %r5, [%r3+200]
jne %r4, %r5, out
add %r2, 1
ja l
out:
exit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{Idioms: true, Hoist: true}); err != nil {
				t.Fatal(err)
			}
			if len(a.Copies) != len(tc.want) || len(tc.want) > 0 && a.Copies[0] != tc.want[0] {
				t.Errorf("loops\n%+v, want\n%+v", a.Copies, tc.want)
			}
		})
	}
}

// findLoopSrc is clang's strlen loop at -O2 (-mcpu=v3 and v4), with test
// standing for its needle tests.
func findLoopSrc(test string) string {
	return `mov %r2, 0
mov %r4, 0x3a
mov32 %r0, 4000
l:
mov %r3, %r1
add %r3, %r2
ldxb %r3, [%r3+0]
` + test + `
add %r2, 1
jeq %r2, 4000, out
ja l
found:
mov32 %r0, %r2
out:
exit`
}

func TestFindLoops(t *testing.T) {
	find := func(cost int32, needles ...Needle) CopyLoop {
		l := CopyLoop{Head: 3, Cost: cost, Size: 1, Counter: 2, DE: 1, Bound: 4000,
			SrcBases: 1<<1 | 1<<2, IVs: 1 << 2, Compare: true, Find: true, Needles: uint8(len(needles))}
		l.End = 3 + cost - 1
		l.Steps[2] = 1
		copy(l.Needle[:], needles)
		return l
	}
	zero := Needle{Reg: -1}
	slenp := CopyLoop{Head: 1, End: 8, Cost: 8, Size: 1, Counter: 2, DE: 1, Bound: 4000,
		SrcBases: 1<<1 | 1<<2, IVs: 1 << 2, Compare: true, Find: true, Needles: 1, Needle: [2]Needle{zero}}
	slenp.Steps[2] = 1
	for _, tc := range []struct {
		name string
		src  string
		want []CopyLoop
	}{
		{name: "strlen", src: findLoopSrc("jeq32 %r3, 0, found"), want: []CopyLoop{find(7, zero)}},
		{name: "strchr", src: findLoopSrc("jeq32 %r3, 0, found\njeq %r3, 0xff, found"), want: []CopyLoop{find(8, zero, Needle{Reg: -1, Imm: 0xff})}},
		{name: "memchr", src: findLoopSrc("jeq32 %r3, %r4, found"), want: []CopyLoop{find(7, Needle{Reg: 4})}},
		{name: "memchr in 64 bits, swapped", src: findLoopSrc("jeq %r4, %r3, found"), want: []CopyLoop{find(7, Needle{Reg: 4, Wide: true})}},
		{name: "a needle from 256", src: findLoopSrc("jeq32 %r3, 0x100, found")},
		{name: "a negative needle", src: findLoopSrc("jeq %r3, -1, found")},
		{name: "three needles", src: findLoopSrc("jeq32 %r3, 0, found\njeq32 %r3, 1, found\njeq32 %r3, 2, found")},
		{name: "stay while equal", src: findLoopSrc("jne32 %r3, 0, found")},
		{name: "another comparison", src: findLoopSrc("jgt32 %r3, 0x7f, found")},
		{name: "a needle the loop writes", src: findLoopSrc("mov %r4, %r2\njeq32 %r3, %r4, found")},
		{name: "a needle that is the counter", src: findLoopSrc("jeq32 %r3, %r2, found")},
		{name: "no needle", src: findLoopSrc("")},
		{name: "slenp", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r3, [%r3+0]
mov %r0, %r2
jeq32 %r3, 0, out
mov %r0, 4000
add %r2, 1
jne %r2, 4000, l
out:
exit`, want: []CopyLoop{slenp}},
		{name: "a result from the iteration before", src: `mov %r2, 0
l:
mov %r3, %r1
add %r3, %r2
ldxb %r3, [%r3+0]
jeq32 %r3, 0, out
mov %r0, %r2
add %r2, 1
jne %r2, 4000, l
out:
exit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{Idioms: true, Hoist: true}); err != nil {
				t.Fatal(err)
			}
			if len(a.Copies) != len(tc.want) || len(tc.want) > 0 && a.Copies[0] != tc.want[0] {
				t.Errorf("loops\n%+v, want\n%+v", a.Copies, tc.want)
			}
		})
	}
}
