package filter

import (
	"bytes"
	"math"
)

// The comparisons here are the definition of the filter's semantics: Eval
// uses them directly and the generated code must agree with them.

// unordered is the three-way result of a comparison involving NaN.
const unordered = 2

// cmpFloat compares two doubles: -1, 0, 1, or unordered when either is
// NaN. -0 equals +0.
func cmpFloat(a, b float64) int {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return unordered
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpIntFloat compares an integer with a double exactly (converting i to
// a double would round above 2^53): -1, 0, 1, or unordered for NaN.
func cmpIntFloat(i int64, d float64) int {
	switch {
	case math.IsNaN(d):
		return unordered
	case d >= 1<<63:
		return -1
	case d < -(1 << 63):
		return 1
	}
	t := math.Trunc(d) // in [-2^63, 2^63): exact as an int64
	ti := int64(t)
	switch {
	case i < ti:
		return -1
	case i > ti:
		return 1
	case d > t:
		return -1
	case d < t:
		return 1
	}
	return 0
}

// holds reports whether a three-way result c satisfies comparison o; an
// unordered result satisfies only !=.
func holds(o op, c int) bool {
	switch o {
	case opEQ:
		return c == 0
	case opNE:
		return c != 0
	case opLT:
		return c == -1
	case opLE:
		return c == -1 || c == 0
	case opGT:
		return c == 1
	case opGE:
		return c == 0 || c == 1
	}
	panic("filter: not a comparison")
}

// cmpInt compares two integers as signed 64-bit values.
func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// globMatch reports whether s matches the pieces of a star pattern: segs[0]
// at the start, the last piece at the end, the others in order between,
// each star matching any run of bytes.
func globMatch(s []byte, segs [][]byte) bool {
	if len(segs) == 1 {
		return bytes.Equal(s, segs[0])
	}
	first, last := segs[0], segs[len(segs)-1]
	if !bytes.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	// Leftmost matches of the middle pieces leave the most room for the
	// rest, so no backtracking is needed with only * wildcards.
	for _, seg := range segs[1 : len(segs)-1] {
		i := bytes.Index(s, seg)
		if i < 0 {
			return false
		}
		s = s[i+len(seg):]
	}
	return bytes.HasSuffix(s, last)
}

// cString is the string a String field holds: its bytes up to the first
// NUL, all of them when there is none.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
