package verifier

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWidenScalarSound checks on random inputs that widening contains
// every number either input contains, whatever the thresholds.
func TestWidenScalarSound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sets := []struct {
		u []uint64
		s []int64
	}{
		{[]uint64{0, 9, 10, 11, 0xfffff, 0x100000, math.MaxUint32, math.MaxUint64}, []int64{math.MinInt64, -1, 0, 9, 10, 11, math.MaxInt64}},
		{limitsU, limitsS},
		{extremesU, extremesS},
	}
	for i := 0; i < 200000; i++ {
		a, x := randScalar(r)
		b, y := randScalar(r)
		th := sets[r.IntN(len(sets))]
		w := widenScalar(a, b, th.u, th.s)
		if w.empty() || !contains(w, x) || !contains(w, y) {
			t.Fatalf("widen(%v, %v) = %v, lost %#x or %#x", a, b, w, x, y)
		}
		if !w.contains(a) || !w.contains(b) {
			t.Fatalf("widen(%v, %v) = %v does not contain its inputs", a, b, w)
		}
	}
}

// TestWidenScalar shows the thresholds at work, as in memcpy's loop.
func TestWidenScalar(t *testing.T) {
	u := []uint64{0, 0xfffff, 0x100000, 0x100001, math.MaxUint32 - 1, math.MaxUint32, math.MaxUint64 - 1, math.MaxUint64}
	s := []int64{math.MinInt64, 0, 0xfffff, 0x100000, 0x100001, math.MaxInt64}
	for _, tc := range []struct {
		name           string
		old, cur       scalar
		umin, umax     uint64
		smin, smax     int64
		constAfterward bool
	}{
		{"up to the next threshold", constScalar(1), constScalar(2), 1, 0xfffff, 1, 0xfffff, false},
		{"past it to the next", rangeScalar(1, 0xfffff), rangeScalar(2, 0x100000), 1, 0x100000, 1, 0x100000, false},
		{"down to zero", constScalar(5), constScalar(4), 0, 5, 0, 5, false},
		{"unchanged", constScalar(7), constScalar(7), 7, 7, 7, 7, true},
	} {
		w := widenScalar(tc.old, tc.cur, u, s)
		if w.umin != tc.umin || w.umax != tc.umax || w.smin != tc.smin || w.smax != tc.smax || w.isConst() != tc.constAfterward {
			t.Errorf("%s: widen(%v, %v) = %v", tc.name, tc.old, tc.cur, w)
		}
	}
}
