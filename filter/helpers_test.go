package filter_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// testSpec is the record the tests filter.
const testSpec = "a:s32,b:u8,c:u16,u:u64,s:s64,i8:s8,i16:s16,x:u32,f:f64,g:f32,name:string[16],tag:string[4],$ctx.vtid:s32,h:f64"

func testFields(t testing.TB) []filter.Field {
	t.Helper()
	fields, err := filter.ParseSpec(testSpec)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

func recordLen(fields []filter.Field) int {
	n := 0
	for _, f := range fields {
		n = max(n, f.Offset+f.Size)
	}
	return n
}

// engines run a compiled filter: the interpreter and the JIT, the
// program verified first.
type engines struct {
	interp *vm.Program
	jit    *jit.Program
}

func load(t testing.TB, f *filter.Filter) engines {
	t.Helper()
	p, err := vm.Load(&vm.ProgramSpec{Instructions: f.Instructions()}, &vm.Options{})
	if err != nil {
		t.Fatalf("%q: load: %v", f.Expr(), err)
	}
	r, err := verifier.Verify(p, &verifier.Options{ContextSize: f.RecordSize()})
	if err != nil {
		t.Fatalf("%q: verify with a %d-byte context: %v", f.Expr(), f.RecordSize(), err)
	}
	// The verifier's work grows with the code, never with its paths:
	// what keeps the largest filters the limits accept cheap to prove.
	if n := len(f.Instructions()); r.InstructionsProcessed > maxProcessed(n) {
		t.Fatalf("%q: the verifier processed %d instructions for %d", f.Expr(), r.InstructionsProcessed, n)
	}
	e := engines{interp: p}
	if jit.Supported {
		if e.jit, err = jit.Compile(p, &jit.Options{Unchecked: true}); err != nil {
			t.Fatalf("%q: jit: %v", f.Expr(), err)
		}
	}
	return e
}

// maxProcessed bounds the verifier's work on a filter of n instructions.
func maxProcessed(n int) int { return 20_000 + 4*n }

// check runs f on record on both engines and compares with Eval.
func (e engines) check(t testing.TB, f *filter.Filter, fields []filter.Field, record []byte) {
	t.Helper()
	want, err := filter.Eval(f.Expr(), fields, record)
	if err != nil {
		t.Fatalf("%q: eval: %v", f.Expr(), err)
	}
	mem := record[:f.RecordSize()]
	got, err := e.interp.Run(mem)
	if err != nil || got != b2u(want) {
		t.Fatalf("%q on %x: interpreter %d (%v), Eval %v", f.Expr(), record, got, err, want)
	}
	if e.jit != nil {
		got, err := e.jit.Run(mem)
		if err != nil || got != b2u(want) {
			t.Fatalf("%q on %x: JIT %d (%v), Eval %v", f.Expr(), record, got, err, want)
		}
		// The entry tracepoints call, where there is one (amd64).
		if d := e.jit.Direct(); d != nil {
			if got, err := d(mem); err != nil || got != b2u(want) {
				t.Fatalf("%q on %x: JIT's direct entry %d (%v), Eval %v", f.Expr(), record, got, err, want)
			}
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// testStrings are string values biased to the patterns of the tests.
var testStrings = []string{
	"", "a", "foo", "foobar", "fooXbarY", "foobarbaz", "barfoo", "xfoo", "foo*bar", "a*b", "*",
	"nginx", "nginx-worker", "abc", "abd", "ab", "abcd", "zzzz", "foo\\bar", `a"b`,
	"fofoo", "foofoo", "barbar", "bar", "ba", "foob", "0123456789abcdef",
}

// randomRecord fills a record with values biased to boundaries.
func randomRecord(r *rand.Rand, fields []filter.Field) []byte {
	rec := make([]byte, recordLen(fields))
	for i := range rec {
		rec[i] = byte(r.Uint32())
	}
	for _, f := range fields {
		b := rec[f.Offset : f.Offset+f.Size]
		switch f.Kind {
		case filter.String:
			var s string
			if r.IntN(8) == 0 {
				s = string(b) // random bytes
				if r.IntN(2) == 0 {
					break
				}
			} else {
				s = testStrings[r.IntN(len(testStrings))]
			}
			n := copy(b, s)
			if n < len(b) {
				b[n] = 0 // garbage may follow
			}
		case filter.Float:
			v := randomFloat(r)
			if f.Size == 4 {
				bitsv := math.Float32bits(float32(v))
				if r.IntN(6) == 0 {
					bitsv = r.Uint32() & (0x807fffff | uint32(r.IntN(2))*0xff<<23) // subnormal or special
				}
				binary.LittleEndian.PutUint32(b, bitsv)
			} else {
				binary.LittleEndian.PutUint64(b, math.Float64bits(v))
			}
		default:
			v := randomInt(r, f.Size, f.Kind == filter.Signed)
			for i := range b {
				b[i] = byte(v >> (8 * i))
			}
		}
	}
	return rec
}

func randomInt(r *rand.Rand, size int, signed bool) uint64 {
	bitsn := 8 * size
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return math.MaxUint64 // -1
	case 3: // the extremes of the width
		if signed {
			return uint64(1)<<(bitsn-1) - uint64(r.IntN(2))
		}
		return uint64(1)<<(bitsn-1)*2 - 1 - uint64(r.IntN(2))
	case 4:
		return uint64(r.IntN(80)) - 8 // small values near the tests' constants
	case 5:
		return uint64(500 + r.IntN(10))
	case 6:
		return uint64(1) << r.IntN(64)
	}
	return r.Uint64()
}

var specialFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2.5, -2.5, 42, 41.99999, 42.00001,
	math.NaN(), math.Inf(1), math.Inf(-1), 1 << 63, -(1 << 63), 1<<53 + 2, -(1<<53 + 2),
	math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1e300, 3, -3, 500,
	9.223372036854775e18, -9.223372036854775e18, 1.5e19, math.Float64frombits(0x7ff8000000000001),
	math.Float64frombits(0xfff0000000000001),
}

func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return r.NormFloat64() * 100
	case 1:
		return float64(r.IntN(100) - 50)
	case 2:
		return math.Float64frombits(r.Uint64())
	}
	return specialFloats[r.IntN(len(specialFloats))]
}
