package jit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/jit"
)

// cmpLoop is a compare loop over two strings of the context for the idiom
// tests.
type cmpLoop struct {
	shape string // "strcmp" (clang's rotated loop), "memcmp" (one block, jne out; jlt back)
	n     int    // positions compared at most
	a, b  int    // the strings' offsets into the context
	start int    // the counter's first value
	size  int    // the element's size in bytes (0: 1)
}

// elem returns the element's size and its load's suffix.
func (l cmpLoop) elem() (int, string) {
	switch l.size {
	case 2:
		return 2, "h"
	case 4:
		return 4, "w"
	case 8:
		return 8, "dw"
	}
	return 1, "b"
}

// loopFold mixes every register the compare and find loops write into
// r0.
const loopFold = `
	mul %r0, 31
	xor %r0, %r2
	mul %r0, 31
	xor %r0, %r3
	mul %r0, 31
	xor %r0, %r4
	exit`

func (l cmpLoop) source() string {
	s, ld := l.elem()
	if l.shape == "memcmp" {
		return fmt.Sprintf(`	mov %%r2, %d
			mov %%r3, 0
			mov %%r4, 0
		loop:
			mov %%r3, %%r1
			add %%r3, %%r2
			ldx%s %%r4, [%%r3%+d]
			ldx%s %%r5, [%%r3%+d]
			jne %%r4, %%r5, diff
			add %%r2, %d
			jlt %%r2, %d, loop
			mov %%r0, 0
			ja out
		diff:
			mov %%r0, %%r4
			sub %%r0, %%r5
		out:`, l.start*s, ld, l.a, ld, l.b, s, l.n*s) + loopFold
	}
	// clang's strcmp at -O2: rotated, entered at head.
	return fmt.Sprintf(`	mov %%r3, %d
			mov %%r0, 0
			ja head
		test:
			jeq32 %%r3, 0, out
			mov %%r3, %%r2
			add %%r3, %d
			jne %%r2, %d, head
		out:`+strings.ReplaceAll(loopFold, "%", "%%")+`
		head:
			mov %%r2, %%r3
			mov %%r3, %%r1
			add %%r3, %%r2
			ldx%s %%r4, [%%r3%+d]
			ldx%s %%r3, [%%r3%+d]
			jeq32 %%r3, %%r4, test
			sub32 %%r3, %%r4
			mov32 %%r0, %%r3
			ja out`, l.start*s, s, (l.n-1)*s, ld, l.b, ld, l.a)
}

// Compare loops (compile_idiom_cmp.go) against the interpreter in every
// mode: lengths around the 16-byte chunks, a difference or a zero at
// every position class, budgets and slices that run out in the middle,
// spans that leave the context in the middle (checked modes).
func TestCompareIdioms(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	type tc struct {
		name   string
		loop   cmpLoop
		ctx    int // context size (0: both strings and 8 bytes)
		diff   int // position where b differs (-1: none)
		zero   int // position where both are 0 (-1: none)
		zeroA  int // position where a alone is 0 (-1: none)
		budget uint64
		slice  uint64
		faults bool // checked modes only
		idioms int
	}
	var cases []tc
	for _, shape := range []string{"strcmp", "memcmp", "strcmp16", "memcmp16", "strcmp32", "memcmp32", "memcmp64"} {
		size := map[string]int{"strcmp16": 2, "memcmp16": 2, "strcmp32": 4, "memcmp32": 4, "memcmp64": 8}[shape]
		base := strings.TrimRight(shape, "0123456789")
		for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 100, 4095, 4096} {
			if size > 1 && n > 1000 {
				continue
			}
			l := cmpLoop{shape: base, n: n, a: 8, b: 16 + n*max(size, 1), size: size}
			idioms := 1
			if base == "strcmp" && n == 1 {
				idioms = 0 // "jne r2, 0": no bound to run to
			}
			add := func(name string, diff, zero, zeroA int) {
				cases = append(cases, tc{name: fmt.Sprintf("%s/%d/%s", shape, n, name), loop: l, diff: diff, zero: zero, zeroA: zeroA, idioms: idioms})
			}
			add("equal", -1, -1, -1)
			for _, p := range []int{0, 1, 14, 15, 16, 17, 31, 32, 33, n - 2, n - 1} {
				if p < 0 || p >= n {
					continue
				}
				add(fmt.Sprintf("diff@%d", p), p, -1, -1)
				add(fmt.Sprintf("zero@%d", p), -1, p, -1)
				add(fmt.Sprintf("zeroA@%d", p), -1, -1, p)
				if p+3 < n {
					add(fmt.Sprintf("zero@%d,diff@%d", p, p+3), p+3, p, -1)
					add(fmt.Sprintf("diff@%d,zero@%d", p, p+3), p, p+3, -1)
				}
			}
		}
	}
	for _, shape := range []string{"strcmp", "memcmp"} {
		l := cmpLoop{shape: shape, n: 1000, a: 0, b: 1000}
		cost := map[string]uint64{"strcmp": 10, "memcmp": 7}[shape]
		cases = append(cases,
			tc{name: shape + "/budget exact", loop: l, ctx: 2000, diff: -1, zero: -1, zeroA: -1, budget: cost*1000 + 40, idioms: 1},
			tc{name: shape + "/budget one short", loop: l, ctx: 2000, diff: -1, zero: -1, zeroA: -1, budget: cost*500 - 1, idioms: 1},
			tc{name: shape + "/budget mid-chunk", loop: l, ctx: 2000, diff: -1, zero: -1, zeroA: -1, budget: cost*37 + 3, idioms: 1},
			tc{name: shape + "/budget before diff", loop: l, ctx: 2000, diff: 300, zero: -1, zeroA: -1, budget: cost * 200, idioms: 1},
			tc{name: shape + "/slices", loop: l, ctx: 2000, diff: -1, zero: -1, zeroA: -1, slice: 77, idioms: 1},
			tc{name: shape + "/slices diff", loop: l, ctx: 2000, diff: 913, zero: -1, zeroA: -1, slice: 101, idioms: 1},
			tc{name: shape + "/start in the middle", loop: cmpLoop{shape: shape, n: 1000, a: 0, b: 1000, start: 333}, ctx: 2000, diff: 900, zero: -1, zeroA: -1, idioms: 1},
			tc{name: shape + "/start at the bound", loop: cmpLoop{shape: shape, n: 100, a: 0, b: 100, start: 100}, ctx: 300, diff: -1, zero: -1, zeroA: -1, idioms: 1},
			tc{name: shape + "/start past the bound", loop: cmpLoop{shape: shape, n: 100, a: 0, b: 100, start: 150}, ctx: 400, diff: -1, zero: -1, zeroA: -1, idioms: 1},
			tc{name: shape + "/fault in the middle of b", loop: l, ctx: 1500, diff: -1, zero: -1, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/diff before the fault", loop: l, ctx: 1500, diff: 450, zero: -1, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/fault in the middle of a", loop: cmpLoop{shape: shape, n: 1000, a: 1000, b: 0}, ctx: 1700, diff: -1, zero: -1, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/fault before a", loop: cmpLoop{shape: shape, n: 1000, a: -5, b: 1000}, ctx: 2000, diff: -1, zero: -1, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/zero before the region's end", loop: l, ctx: 1500, diff: -1, zero: 400, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/diff 20 bytes before the region's end", loop: l, ctx: 1500, diff: 480, zero: -1, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/fault 10 bytes into b", loop: l, ctx: 1010, diff: -1, zero: -1, zeroA: -1, faults: true, idioms: 1},
			tc{name: shape + "/fault at the last byte", loop: l, ctx: 1999, diff: -1, zero: -1, zeroA: -1, faults: true, idioms: 1},
		)
	}
	// The budget, slice and fault cases again with wider elements: the
	// offsets and the context in elements.
	for _, size := range []int{2, 4, 8} {
		for _, c := range cases {
			if c.loop.n != 1000 && c.loop.n != 100 || c.loop.size != 0 || size == 8 && c.loop.shape == "strcmp" {
				continue
			}
			c.name = fmt.Sprintf("%s (%d-byte elements)", c.name, size)
			c.loop.size, c.loop.a, c.loop.b = size, c.loop.a*size, c.loop.b*size
			c.ctx *= size
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vp := loadWideLoops(t, c.loop.source(), c.idioms)
			if c.slice != 0 {
				defer jit.SetSlice(c.slice)()
			}
			s, _ := c.loop.elem()
			ctx := c.ctx
			if ctx == 0 {
				ctx = c.loop.b + c.loop.n*s + 8
			}
			in := diffInput{mem: make([]byte, ctx), budget: c.budget}
			set := func(off int, v byte) {
				if off >= 0 && off < ctx {
					in.mem[off] = v
				}
			}
			// Element i's bytes; a difference in one byte of element
			// p, which one varying with p; a zero element: all bytes.
			for i := range c.loop.n * s {
				v := byte(1 + (i*7+i>>8)%250)
				set(c.loop.a+i, v)
				set(c.loop.b+i, v)
			}
			if c.diff >= 0 {
				d := c.diff*s + c.diff%s
				set(c.loop.b+d, byte(1+(d*7+d>>8+100)%250))
			}
			for j := range s {
				if c.zero >= 0 {
					set(c.loop.a+c.zero*s+j, 0)
					set(c.loop.b+c.zero*s+j, 0)
				}
				if c.zeroA >= 0 {
					set(c.loop.a+c.zeroA*s+j, 0)
				}
			}
			modes := allModes
			if c.faults {
				modes = checkedModes
			}
			if err := diffEngines(vp, in, modes...); err != nil {
				t.Fatal(err)
			}
		})
	}
}
