package filter_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// Widening a binary32 field is exact for every subnormal (the binary
// search without branches), and for normal numbers, zeros and Inf
// sampled across every exponent: g == f holds with f the exact double.
func TestWidenExact(t *testing.T) {
	fields, err := filter.ParseSpec("g:f32,_pad:u32,f:f64")
	if err != nil {
		t.Fatal(err)
	}
	flt, err := filter.Compile("g == f && !(g < f) && !(g > f)", fields)
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, flt)
	run := e.interp.Run
	step := uint32(997) // the interpreter is slower: a sample
	if e.jit != nil {
		run, step = e.jit.Run, 1
	}
	if testing.Short() {
		step = 9973
	}
	rec := make([]byte, 16)
	try := func(bits uint32) {
		binary.LittleEndian.PutUint32(rec, bits)
		binary.LittleEndian.PutUint64(rec[8:], math.Float64bits(float64(math.Float32frombits(bits))))
		if got, err := run(rec); err != nil || got != 1 {
			t.Fatalf("g = %#08x (%g): %d, %v; want the double %#016x equal", bits, math.Float32frombits(bits), got, err, binary.LittleEndian.Uint64(rec[8:]))
		}
	}
	for _, sign := range []uint32{0, 1 << 31} {
		for m := uint32(0); m < 1<<23; m += step {
			try(sign | m) // zero and subnormals
		}
		for _, m := range []uint32{1, 2, 3, 1<<23 - 1, 1 << 22, 0x2aaaaa} {
			try(sign | m)
		}
		for exp := uint32(1); exp < 0xff; exp++ {
			for _, m := range []uint32{0, 1, 1<<23 - 1, 0x12345} {
				try(sign | exp<<23 | m)
			}
		}
		try(sign | 0xff<<23) // Inf
	}
}
