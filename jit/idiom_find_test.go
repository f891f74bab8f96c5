package jit_test

import (
	"fmt"
	"testing"

	"github.com/uebpf/uebpf/jit"
)

// findLoop is a find-byte loop over a string of the context for the idiom
// tests, in one of clang's -O2 shapes.
type findLoop struct {
	// shape: "strlen" (jeq32 r3, 0 out; add; jeq bound out; ja head),
	// "slenp" (a temporary written before each exit; jne bound head),
	// "memchr32" and "memchr64" (the needle in r4, compared in 32 or 64
	// bits), "chrnul" (two needles: 0 and ':').
	shape  string
	n      int    // the bound: positions scanned at most
	a      int    // the string's offset into the context
	start  int    // the counter's first value
	needle uint64 // memchr's r4
}

func (l findLoop) source() string {
	if l.shape == "slenp" {
		return fmt.Sprintf(`	mov %%r2, %d
			mov %%r4, 0
		head:
			mov %%r3, %%r1
			add %%r3, %%r2
			ldxb %%r3, [%%r3%+d]
			mov %%r0, %%r2
			jeq32 %%r3, 0, out
			mov %%r0, %d
			add %%r2, 1
			jne %%r2, %d, head
		out:`, l.start, l.a, l.n, l.n) + loopFold
	}
	test := map[string]string{
		"strlen":   "jeq32 %r3, 0, found",
		"memchr32": "jeq32 %r3, %r4, found",
		"memchr64": "jeq %r3, %r4, found",
		"chrnul":   "jeq32 %r3, 0, found\n\t\t\tjeq32 %r3, 0x3a, found",
	}[l.shape]
	return fmt.Sprintf(`	mov %%r2, %d
			lddw %%r4, %d
			mov32 %%r0, %d
		head:
			mov %%r3, %%r1
			add %%r3, %%r2
			ldxb %%r3, [%%r3%+d]
			%s
			add %%r2, 1
			jeq %%r2, %d, out
			ja head
		found:
			mov32 %%r0, %%r2
		out:`, l.start, l.needle, l.n, l.a, test, l.n) + loopFold
}

// findFiller is the byte at position i of a string: never 0, ':', 0x41
// or 0x80 (the needles).
func findFiller(i int) byte {
	v := byte(1 + (i*7+i>>8)%250)
	switch v {
	case ':', 0x41, 0x80:
		v++
	}
	return v
}

// Find loops (compile_idiom_find.go) against the interpreter in every
// mode: string lengths 0..70 and large, the match at every position class
// around the 16-byte chunks, bounds that stop the scan, budgets and slices
// that run out in the middle, spans that leave the context in the middle
// (checked modes).
func TestFindIdioms(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	type tc struct {
		name   string
		loop   findLoop
		ctx    int    // context size (0: the bound's span and 8 bytes)
		match  int    // position of the matching byte (-1: none)
		byte_  byte   // the matching byte
		other  int    // position of a byte that matches only in 32 bits (-1: none)
		budget uint64 // 0: the default
		slice  uint64
		faults bool // checked modes only
	}
	shapes := []struct {
		shape  string
		needle uint64
		match  byte
	}{
		{"strlen", 0, 0},
		{"slenp", 0, 0},
		{"memchr32", 0x80, 0x80},
		{"memchr64", 0x41, 0x41},
		{"chrnul", 0, ':'},
	}
	var cases []tc
	for _, s := range shapes {
		// A bound well past the string: lengths 0..70 and large, at
		// offsets on and off 16-byte boundaries.
		for _, a := range []int{0, 3, 16} {
			l := findLoop{shape: s.shape, n: 4000, a: a, needle: s.needle}
			for _, p := range []int{0, 1, 2, 7, 14, 15, 16, 17, 30, 31, 32, 33, 47, 48, 49, 63, 64, 65, 70, 255, 256, 1000, 3998, 3999} {
				cases = append(cases, tc{name: fmt.Sprintf("%s/a%d/match@%d", s.shape, a, p), loop: l, match: p, byte_: s.match, other: -1})
			}
			cases = append(cases, tc{name: fmt.Sprintf("%s/a%d/none", s.shape, a), loop: l, match: -1, other: -1})
		}
		// Bounds that stop the scan.
		for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 70, 100} {
			l := findLoop{shape: s.shape, n: n, a: 5, needle: s.needle}
			cases = append(cases,
				tc{name: fmt.Sprintf("%s/n%d/none", s.shape, n), loop: l, match: -1, other: -1},
				tc{name: fmt.Sprintf("%s/n%d/match@n-1", s.shape, n), loop: l, match: n - 1, byte_: s.match, other: -1},
				tc{name: fmt.Sprintf("%s/n%d/match@n", s.shape, n), loop: l, match: n, byte_: s.match, other: -1})
		}
		l := findLoop{shape: s.shape, n: 1000, needle: s.needle}
		cost := uint64(7)
		if s.shape == "chrnul" || s.shape == "slenp" {
			cost = 8
		}
		cases = append(cases,
			tc{name: s.shape + "/budget exact", loop: l, ctx: 1000, match: -1, other: -1, budget: cost*1000 + 40},
			tc{name: s.shape + "/budget one short", loop: l, ctx: 1000, match: -1, other: -1, budget: cost*500 - 1},
			tc{name: s.shape + "/budget mid-chunk", loop: l, ctx: 1000, match: -1, other: -1, budget: cost*37 + 3},
			tc{name: s.shape + "/budget before the match", loop: l, ctx: 1000, match: 300, byte_: s.match, other: -1, budget: cost * 200},
			tc{name: s.shape + "/slices", loop: l, ctx: 1000, match: -1, other: -1, slice: 77},
			tc{name: s.shape + "/slices match", loop: l, ctx: 1000, match: 913, byte_: s.match, other: -1, slice: 101},
			tc{name: s.shape + "/start in the middle", loop: findLoop{shape: s.shape, n: 1000, start: 333, needle: s.needle}, ctx: 1000, match: 900, byte_: s.match, other: -1},
			tc{name: s.shape + "/start at the bound", loop: findLoop{shape: s.shape, n: 100, start: 100, needle: s.needle}, ctx: 300, match: -1, other: -1, faults: true},
			tc{name: s.shape + "/fault in the middle", loop: l, ctx: 700, match: -1, other: -1, faults: true},
			tc{name: s.shape + "/fault 10 bytes in", loop: findLoop{shape: s.shape, n: 1000, a: 690, needle: s.needle}, ctx: 700, match: -1, other: -1, faults: true},
			tc{name: s.shape + "/fault at the last byte", loop: l, ctx: 999, match: -1, other: -1, faults: true},
			tc{name: s.shape + "/fault before", loop: findLoop{shape: s.shape, n: 1000, a: -5, needle: s.needle}, ctx: 1000, match: -1, other: -1, faults: true},
			tc{name: s.shape + "/match before the region's end", loop: l, ctx: 700, match: 650, byte_: s.match, other: -1, faults: true},
			tc{name: s.shape + "/match 20 bytes before the region's end", loop: l, ctx: 700, match: 680, byte_: s.match, other: -1, faults: true},
		)
	}
	// Needles from 256 on: only the low 32 bits count in jeq32, all 64
	// in jeq (where the loop then runs byte by byte).
	for _, shape := range []string{"memchr32", "memchr64"} {
		l := findLoop{shape: shape, n: 1000, needle: 1<<32 | 0x41}
		cases = append(cases,
			tc{name: shape + "/needle 2^32+0x41", loop: l, match: -1, other: 500},
			tc{name: shape + "/needle 0x141", loop: findLoop{shape: shape, n: 1000, needle: 0x141}, match: -1, other: 500})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vp := loadWideLoops(t, c.loop.source(), 1)
			if c.slice != 0 {
				defer jit.SetSlice(c.slice)()
			}
			ctx := c.ctx
			if ctx == 0 {
				ctx = c.loop.a + c.loop.n + 8
			}
			in := diffInput{mem: make([]byte, ctx), budget: c.budget}
			set := func(off int, v byte) {
				if off >= 0 && off < ctx {
					in.mem[off] = v
				}
			}
			for i := range ctx {
				set(i, findFiller(i))
			}
			if c.match >= 0 {
				set(c.loop.a+c.match, c.byte_)
			}
			if c.other >= 0 {
				set(c.loop.a+c.other, 0x41)
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
