package arm64

import "math/bits"

// A logical immediate (the operand of AND, ORR, EOR and ANDS) is a
// pattern of e bits, e one of 2, 4, 8, 16, 32 or 64, repeated to fill the
// register, where the pattern is a single run of ones rotated right by
// some amount. It is encoded as N:imms (e and the number of ones) and immr
// (the rotation). All zeros and all ones are not encodable.

// IsLogicalImm reports whether v is encodable as the immediate of a
// logical instruction of the given size (4 or 8). For size 4, v must fit
// in 32 bits.
func IsLogicalImm(size int, v uint64) bool {
	_, _, _, ok := encodeBitmask(size, v)
	return ok
}

// encodeBitmask returns the N, immr and imms fields encoding v.
func encodeBitmask(size int, v uint64) (n, immr, imms uint32, ok bool) {
	if size == 4 {
		if v>>32 != 0 {
			return 0, 0, 0, false
		}
		v |= v << 32 // a 32-bit pattern is the 64-bit one with e <= 32
	}
	if v == 0 || v == ^uint64(0) {
		return 0, 0, 0, false
	}
	// The element size is the smallest period of v.
	e := uint(64)
	for e > 2 {
		half := e / 2
		mask := uint64(1)<<half - 1
		if v&mask != v>>half&mask {
			break
		}
		e = half
	}
	mask := ^uint64(0) >> (64 - e)
	elem := v & mask
	// Rotate the element right until its run of ones starts at bit 0: by
	// the trailing zeros if bit 0 is clear, else (the run wraps around)
	// past its trailing ones and then its remaining zeros.
	var rot uint // element == ones(count) rotated right by (e-rot)%e
	if elem&1 == 0 {
		rot = uint(bits.TrailingZeros64(elem))
	} else {
		ones := uint(bits.TrailingZeros64(^elem))
		if rest := elem >> ones; rest != 0 { // zeros, then the run's other part
			rot = (ones + uint(bits.TrailingZeros64(rest))) % e
		}
	}
	run := rotr(elem, rot, e)
	if run&(run+1) != 0 { // not a single run of ones from bit 0
		return 0, 0, 0, false
	}
	count := uint(bits.OnesCount64(run))
	if count == 0 || count == e {
		return 0, 0, 0, false
	}
	immr = uint32((e - rot) % e)
	imms = uint32(^(e-1)<<1&0x3f) | uint32(count-1)
	if e == 64 {
		n = 1
	}
	return n, immr, imms, true
}

// rotr rotates the low e bits of x right by r.
func rotr(x uint64, r, e uint) uint64 {
	if r == 0 {
		return x
	}
	mask := ^uint64(0) >> (64 - e)
	return (x>>r | x<<(e-r)) & mask
}

// decodeBitmask returns the value of a logical immediate's fields, or
// ok == false for a reserved encoding. The tests use it to check
// encodeBitmask.
func decodeBitmask(size int, n, immr, imms uint32) (uint64, bool) {
	combined := n<<6 | ^imms&0x3f
	if combined == 0 {
		return 0, false
	}
	length := 31 - bits.LeadingZeros32(combined) // e = 1 << length
	if length < 1 || (size == 4 && n == 1) {
		return 0, false
	}
	e := uint(1) << length
	s := uint(imms) & (e - 1)
	r := uint(immr) & (e - 1)
	if s == e-1 {
		return 0, false // all ones is reserved
	}
	elem := rotr(uint64(1)<<(s+1)-1, r, e)
	v := elem
	for w := e; w < 64; w *= 2 {
		v |= v << w
	}
	if size == 4 {
		v &= 0xffffffff
	}
	return v, true
}
