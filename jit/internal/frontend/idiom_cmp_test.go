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
