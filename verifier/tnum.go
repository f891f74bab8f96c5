package verifier

import (
	"fmt"
	"math"
	"math/bits"
)

// tnum is a tristate number: every bit is known 0, known 1, or unknown.
// A bit set in mask is unknown; the known bits are in value (value&mask
// is always 0). This is the "var_off" of the Linux verifier.
type tnum struct {
	value, mask uint64
}

var tnumUnknown = tnum{mask: math.MaxUint64}

func tnumConst(v uint64) tnum { return tnum{value: v} }

// tnumRange is the most precise tnum containing every number in [min, max].
func tnumRange(min, max uint64) tnum {
	chi := min ^ max
	n := bits.Len64(chi)
	if n > 63 {
		return tnumUnknown
	}
	delta := uint64(1)<<n - 1
	return tnum{value: min &^ delta, mask: delta}
}

func (t tnum) isConst() bool { return t.mask == 0 }

// contains reports whether every number t2 may be is also possible for t.
func (t tnum) contains(t2 tnum) bool {
	if t2.mask&^t.mask != 0 {
		return false
	}
	return t.value&^t2.mask == t2.value&^t.mask
}

func (t tnum) add(o tnum) tnum {
	sm := t.mask + o.mask
	sv := t.value + o.value
	sigma := sm + sv
	chi := sigma ^ sv
	mu := chi | t.mask | o.mask
	return tnum{value: sv &^ mu, mask: mu}
}

func (t tnum) sub(o tnum) tnum {
	dv := t.value - o.value
	alpha := dv + t.mask
	beta := dv - o.mask
	chi := alpha ^ beta
	mu := chi | t.mask | o.mask
	return tnum{value: dv &^ mu, mask: mu}
}

func (t tnum) and(o tnum) tnum {
	alpha := t.value | t.mask
	beta := o.value | o.mask
	v := t.value & o.value
	return tnum{value: v, mask: alpha & beta &^ v}
}

func (t tnum) or(o tnum) tnum {
	v := t.value | o.value
	mu := t.mask | o.mask
	return tnum{value: v, mask: mu &^ v}
}

func (t tnum) xor(o tnum) tnum {
	v := t.value ^ o.value
	mu := t.mask | o.mask
	return tnum{value: v &^ mu, mask: mu}
}

func (t tnum) lsh(k uint) tnum { return tnum{value: t.value << k, mask: t.mask << k} }
func (t tnum) rsh(k uint) tnum { return tnum{value: t.value >> k, mask: t.mask >> k} }

func (t tnum) arsh(k uint) tnum {
	return tnum{value: uint64(int64(t.value) >> k), mask: uint64(int64(t.mask) >> k)}
}

// mul multiplies by shift-and-add, as in Linux's tnum_mul.
func (t tnum) mul(o tnum) tnum {
	accV := t.value * o.value
	accM := tnumConst(0)
	a, b := t, o
	for a.value != 0 || a.mask != 0 {
		if a.value&1 != 0 {
			accM = accM.add(tnum{mask: b.mask})
		} else if a.mask&1 != 0 {
			accM = accM.add(tnum{mask: b.value | b.mask})
		}
		a = a.rsh(1)
		b = b.lsh(1)
	}
	return tnum{value: accV, mask: 0}.add(accM)
}

// intersect combines two facts about the same number.
func (t tnum) intersect(o tnum) tnum {
	v := t.value | o.value
	mu := t.mask & o.mask
	return tnum{value: v &^ mu, mask: mu}
}

// cast32 keeps the low 32 bits (zero extension).
func (t tnum) cast32() tnum {
	return tnum{value: t.value & math.MaxUint32, mask: t.mask & math.MaxUint32}
}

// conflicts reports whether two tnums describe no common number.
func (t tnum) conflicts(o tnum) bool {
	mu := t.mask | o.mask
	return (t.value^o.value)&^mu != 0
}

func (t tnum) umin() uint64 { return t.value }
func (t tnum) umax() uint64 { return t.value | t.mask }

func (t tnum) smin() int64 { return int64(t.value | t.mask&(1<<63)) }
func (t tnum) smax() int64 { return int64(t.value | t.mask&^(1<<63)) }

func (t tnum) String() string {
	if t.isConst() {
		return fmt.Sprintf("%#x", t.value)
	}
	return fmt.Sprintf("(%#x; %#x)", t.value, t.mask)
}
