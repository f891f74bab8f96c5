package verifier

import (
	"fmt"
	"math"
	"math/bits"
)

// scalar is what the verifier knows about a 64-bit number: a tnum and
// signed and unsigned ranges. The facts are kept consistent by sync.
// Pointers use a scalar for their offset from the start of their region.
type scalar struct {
	t          tnum
	smin, smax int64
	umin, umax uint64
}

func unknownScalar() scalar {
	return scalar{t: tnumUnknown, smin: math.MinInt64, smax: math.MaxInt64, umax: math.MaxUint64}
}

func constScalar(v uint64) scalar {
	return scalar{t: tnumConst(v), smin: int64(v), smax: int64(v), umin: v, umax: v}
}

// rangeScalar is a number in [lo, hi] (unsigned).
func rangeScalar(lo, hi uint64) scalar {
	s := unknownScalar()
	s.umin, s.umax = lo, hi
	s.sync()
	return s
}

func (s scalar) isConst() bool { return s.t.isConst() }
func (s scalar) value() uint64 { return s.t.value }

// empty reports whether the facts contradict each other: no number fits.
func (s scalar) empty() bool {
	return s.umin > s.umax || s.smin > s.smax ||
		s.t.umin() > s.umax || s.t.umax() < s.umin
}

// sync derives each fact from the others, as Linux's reg_bounds_sync.
func (s *scalar) sync() {
	for range 2 {
		s.umin = max(s.umin, s.t.umin())
		s.umax = min(s.umax, s.t.umax())
		s.smin = max(s.smin, s.t.smin())
		s.smax = min(s.smax, s.t.smax())
		// When the sign is known, the signed and unsigned ranges are
		// the same set of bit patterns.
		if s.smin >= 0 || s.smax < 0 {
			s.umin = max(s.umin, uint64(s.smin))
			s.umax = min(s.umax, uint64(s.smax))
		}
		if int64(s.umax) >= 0 || int64(s.umin) < 0 {
			s.smin = max(s.smin, int64(s.umin))
			s.smax = min(s.smax, int64(s.umax))
		}
		if s.umin <= s.umax {
			s.t = s.t.intersect(tnumRange(s.umin, s.umax))
		}
	}
}

// fromTnum sets the ranges from the tnum alone.
func fromTnum(t tnum) scalar {
	s := unknownScalar()
	s.t = t
	s.sync()
	return s
}

// contains reports whether every number o may be is allowed by s.
func (s scalar) contains(o scalar) bool {
	return s.t.contains(o.t) && s.umin <= o.umin && o.umax <= s.umax &&
		s.smin <= o.smin && o.smax <= s.smax
}

func (s scalar) equal(o scalar) bool { return s == o }

// cast32 zero-extends the low 32 bits.
func (s scalar) cast32() scalar {
	if s.umax <= math.MaxUint32 {
		return s
	}
	return fromTnum(s.t.cast32())
}

func (s scalar) add(o scalar) scalar {
	r := unknownScalar()
	r.t = s.t.add(o.t)
	if hi, c := bits.Add64(s.umax, o.umax, 0); c == 0 {
		r.umin, r.umax = s.umin+o.umin, hi
	}
	lo, ok1 := addInt(s.smin, o.smin)
	hi, ok2 := addInt(s.smax, o.smax)
	if ok1 && ok2 {
		r.smin, r.smax = lo, hi
	}
	r.sync()
	return r
}

func (s scalar) sub(o scalar) scalar {
	r := unknownScalar()
	r.t = s.t.sub(o.t)
	if s.umin >= o.umax {
		r.umin, r.umax = s.umin-o.umax, s.umax-o.umin
	}
	lo, ok1 := subInt(s.smin, o.smax)
	hi, ok2 := subInt(s.smax, o.smin)
	if ok1 && ok2 {
		r.smin, r.smax = lo, hi
	}
	r.sync()
	return r
}

func (s scalar) mul(o scalar) scalar {
	r := unknownScalar()
	r.t = s.t.mul(o.t)
	if s.umax <= math.MaxUint32 && o.umax <= math.MaxUint32 {
		r.umin, r.umax = s.umin*o.umin, s.umax*o.umax
	}
	r.sync()
	return r
}

func (s scalar) and(o scalar) scalar {
	r := unknownScalar()
	r.t = s.t.and(o.t)
	r.umax = min(s.umax, o.umax)
	r.sync()
	return r
}

func (s scalar) or(o scalar) scalar {
	r := unknownScalar()
	r.t = s.t.or(o.t)
	r.umin = max(s.umin, o.umin)
	r.sync()
	return r
}

func (s scalar) xor(o scalar) scalar { return fromTnum(s.t.xor(o.t)) }

func (s scalar) lsh(k uint) scalar {
	r := unknownScalar()
	r.t = s.t.lsh(k)
	if s.umax <= math.MaxUint64>>k {
		r.umin, r.umax = s.umin<<k, s.umax<<k
	}
	r.sync()
	return r
}

func (s scalar) rsh(k uint) scalar {
	r := unknownScalar()
	r.t = s.t.rsh(k)
	r.umin, r.umax = s.umin>>k, s.umax>>k
	r.sync()
	return r
}

func (s scalar) arsh(k uint) scalar {
	r := unknownScalar()
	r.t = s.t.arsh(k)
	r.smin, r.smax = s.smin>>k, s.smax>>k
	r.sync()
	return r
}

func addInt(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

func subInt(a, b int64) (int64, bool) {
	c := a - b
	return c, (c < a) == (b > 0)
}

func (s scalar) String() string {
	if s.isConst() {
		return fmt.Sprintf("%d", int64(s.value()))
	}
	out := ""
	if s.umin != 0 || s.umax != math.MaxUint64 {
		out += fmt.Sprintf("umin=%d,umax=%d,", s.umin, s.umax)
	}
	if s.smin != math.MinInt64 || s.smax != math.MaxInt64 {
		if !(s.smin == int64(s.umin) && s.smax == int64(s.umax)) {
			out += fmt.Sprintf("smin=%d,smax=%d,", s.smin, s.smax)
		}
	}
	if s.t.mask != math.MaxUint64 {
		out += "var_off=" + s.t.String() + ","
	}
	if out == "" {
		return "?"
	}
	return out[:len(out)-1]
}
