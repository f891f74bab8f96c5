package benchset

import (
	"bytes"
	"embed"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/maps"
)

//go:embed c/*.bpf.o
var objects embed.FS

// Object returns the committed object c/<name>.bpf.o.
func Object(name string) ([]byte, error) {
	return objects.ReadFile("c/" + name + ".bpf.o")
}

// Benchmark is one program of the set.
type Benchmark struct {
	Name    string
	Object  string // c/<Object>.bpf.o
	Program string // function name in the object
	// Input returns a fresh context; programs may write it (memcpy does).
	Input func() []byte
	// Want is the expected r0, computed independently of both the program
	// and Native.
	Want uint64
	// Native is the same computation in plain Go, for ratios.
	Native func(ctx []byte) uint64
	// Setup prepares the collection's maps, if the program uses any.
	Setup func(*uebpf.Collection) error
}

// Load loads the benchmark's object for engine and runs Setup.
func (b *Benchmark) Load(engine uebpf.Engine) (*uebpf.Collection, *uebpf.Program, error) {
	return b.load(&uebpf.Options{Engine: engine})
}

// LoadUnverified loads the benchmark's object for the JIT without the
// verifier, so that the JIT checks every access, and runs Setup.
func (b *Benchmark) LoadUnverified() (*uebpf.Collection, *uebpf.Program, error) {
	return b.load(&uebpf.Options{Engine: uebpf.EngineJIT, SkipVerification: true})
}

func (b *Benchmark) load(opts *uebpf.Options) (*uebpf.Collection, *uebpf.Program, error) {
	obj, err := Object(b.Object)
	if err != nil {
		return nil, nil, err
	}
	// No time limit: the set's longest runs (a 1 MiB byte loop) take
	// more than the default second on the interpreter under the race
	// detector; their budgets bound them.
	opts.Timeout = -1
	coll, err := uebpf.Load(bytes.NewReader(obj), opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	p := coll.Program(b.Program)
	if p == nil {
		coll.Close()
		return nil, nil, fmt.Errorf("%s: no program %s", b.Name, b.Program)
	}
	if b.Setup != nil {
		if err := b.Setup(coll); err != nil {
			coll.Close()
			return nil, nil, fmt.Errorf("%s: setup: %w", b.Name, err)
		}
	}
	return coll, p, nil
}

// Sizes of the inputs, as in the C sources.
const (
	log2Values  = 1024
	memcpySize  = 1 << 20
	primeBound  = 10000
	primeCount  = 1229 // primes below 10000
	strSize     = 4096
	switchBytes = 1024
	mapLoops    = 1000
)

// Set is the benchmark set, in the order of the report.
var Set = []*Benchmark{
	{
		Name: "simple", Object: "simple", Program: "simple",
		Input:  func() []byte { return nil },
		Want:   0,
		Native: func([]byte) uint64 { return 0 },
	},
	{
		Name: "memory_a_plus_b", Object: "memory_a_plus_b", Program: "memory_a_plus_b",
		Input: func() []byte {
			return words32(0x12345678, 0x11111111)
		},
		Want: 0x23456789,
		Native: func(ctx []byte) uint64 {
			w := asWords32(ctx)
			return uint64(w[0]) + uint64(w[1])
		},
	},
	{
		Name: "log2_int", Object: "log2_int", Program: "log2_int",
		Input: func() []byte { return wordBytes(log2Input()) },
		Want: func() uint64 {
			var sum uint64
			for _, v := range log2Input() {
				sum += uint64(bits.Len64(v) - 1)
			}
			return sum
		}(),
		Native: func(ctx []byte) uint64 {
			var sum uint64
			for _, v := range asWords64(ctx)[:log2Values] {
				sum += log2Cascade(v)
			}
			return sum
		},
	},
	{
		Name: "memcpy", Object: "memcpy", Program: "memcpy_1m",
		Input: func() []byte {
			b := make([]byte, 2*memcpySize)
			for i := range memcpySize {
				b[i] = byte(memcpyPattern(i))
			}
			return b
		},
		Want: memcpyPattern(0) + memcpyPattern(memcpySize/2) + memcpyPattern(memcpySize-1),
		Native: func(ctx []byte) uint64 {
			src, dst := ctx[:memcpySize], ctx[memcpySize:]
			for i := range src { // byte by byte, like the program
				dst[i] = src[i]
			}
			return uint64(dst[0]) + uint64(dst[memcpySize/2]) + uint64(dst[memcpySize-1])
		},
	},
	{
		Name: "prime", Object: "prime", Program: "prime",
		Input: func() []byte { return words32(primeBound) },
		Want:  primeCount,
		Native: func(ctx []byte) uint64 {
			n := asWords32(ctx)[0]
			var count uint64
			for i := uint32(2); i < n; i++ {
				prime := uint64(1)
				for d := uint32(2); d*d <= i; d++ {
					if i%d == 0 {
						prime = 0
						break
					}
				}
				count += prime
			}
			return count
		},
	},
	{
		Name: "strcmp_fail", Object: "strcmp", Program: "strcmp_fail",
		Input: func() []byte { return strings('y', 'x') },
		Want:  'y' - 'x',
		Native: func(ctx []byte) uint64 {
			return uint64(compare(ctx[:strSize], ctx[strSize:]))
		},
	},
	{
		Name: "strcmp_full", Object: "strcmp", Program: "strcmp_full",
		Input: func() []byte { return strings('x', 'x') },
		Want:  0,
		Native: func(ctx []byte) uint64 {
			return uint64(compare(ctx[:strSize], ctx[strSize:]))
		},
	},
	{
		Name: "strlen", Object: "strlen", Program: "str_len",
		Input: func() []byte { return strings('x', 'x')[:strSize] },
		Want:  strSize - 1,
		Native: func(ctx []byte) uint64 {
			n := bytes.IndexByte(ctx[:strSize], 0)
			if n < 0 {
				n = strSize
			}
			return uint64(n)
		},
	},
	{
		Name: "switch", Object: "switch", Program: "switch_loop",
		Input:  switchInput,
		Want:   switchWant,
		Native: func(ctx []byte) uint64 { return switchLoop(ctx) },
	},
	{
		Name: "map_array_lookup", Object: "maps", Program: "map_array_lookup",
		Input: func() []byte { return nil },
		Want:  mapLoops * (mapLoops - 1) / 2,
		Setup: func(c *uebpf.Collection) error {
			m := c.Map("array")
			for k := uint32(0); k < 1024; k++ {
				if err := m.Update(k, uint64(k), maps.UpdateAny); err != nil {
					return err
				}
			}
			return nil
		},
		Native: func([]byte) uint64 {
			var sum uint64
			for i := range uint32(mapLoops) {
				sum += nativeArray[i&1023]
			}
			return sum
		},
	},
	{
		Name: "map_hash_update", Object: "maps", Program: "map_hash_update",
		Input: func() []byte { return nil },
		Want:  0,
		Native: func([]byte) uint64 {
			for i := range uint32(mapLoops) {
				nativeHash[i&1023] = uint64(i)
			}
			return 0
		},
	},
}

// Native stand-ins for the maps: a Go array and a Go map.
var (
	nativeArray = func() (a [1024]uint64) {
		for i := range a {
			a[i] = uint64(i)
		}
		return a
	}()
	nativeHash = make(map[uint32]uint64, 1024)
)

// memcpyPattern is byte i of the memcpy source.
func memcpyPattern(i int) uint64 { return uint64(byte(i*7 + 3)) }

// log2Cascade is the program's branch-free log2.
func log2Cascade(v uint64) uint64 {
	var r, s uint64
	s = b2u(v > 0xffffffff) << 5
	v >>= s
	r |= s
	s = b2u(v > 0xffff) << 4
	v >>= s
	r |= s
	s = b2u(v > 0xff) << 3
	v >>= s
	r |= s
	s = b2u(v > 0xf) << 2
	v >>= s
	r |= s
	s = b2u(v > 0x3) << 1
	v >>= s
	r |= s
	return r | v>>1
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// log2Input is 1024 nonzero values of every magnitude, from a fixed
// xorshift sequence.
func log2Input() []uint64 {
	vals := make([]uint64, log2Values)
	x := uint64(88172645463325252)
	for i := range vals {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		vals[i] = x>>(x%64) | 1
	}
	return vals
}

// strings returns two NUL-terminated strings of strSize-1 bytes that start
// with a and b and are equal after.
func strings(a, b byte) []byte {
	s := bytes.Repeat([]byte{'x'}, 2*strSize)
	s[0], s[strSize] = a, b
	s[strSize-1], s[2*strSize-1] = 0, 0
	return s
}

// compare is the program's strcmp.
func compare(a, b []byte) int32 {
	for i := range strSize {
		if a[i] != b[i] {
			return int32(a[i]) - int32(b[i])
		}
		if a[i] == 0 {
			return 0
		}
	}
	return 0
}

func switchInput() []byte {
	b := make([]byte, switchBytes)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x >> 7)
	}
	return b
}

var switchWant = switchLoop(switchInput())

// switchLoop is the program's switch.
func switchLoop(data []byte) uint64 {
	acc := uint64(1)
	for i := range switchBytes {
		d := uint64(data[i])
		u := uint64(i)
		switch data[i] & 31 {
		case 0:
			acc += 3
		case 1:
			acc ^= 0x55
		case 2:
			acc *= 3
		case 3:
			acc -= 7
		case 4:
			acc <<= 1
		case 5:
			acc >>= 1
		case 6:
			acc |= 0x100
		case 7:
			acc &= 0xffffff
		case 8:
			acc += u
		case 9:
			acc ^= u
		case 10:
			acc -= u
		case 11:
			acc += acc >> 3
		case 12:
			acc ^= acc << 2
		case 13:
			acc += 11
		case 14:
			acc *= 5
		case 15:
			acc ^= 0xabcd
		case 16:
			acc += 17
		case 17:
			acc -= 19
		case 18:
			acc |= 1
		case 19:
			acc &^= 1
		case 20:
			acc += d
		case 21:
			acc ^= d
		case 22:
			acc *= 7
		case 23:
			acc -= d
		case 24:
			acc += acc
		case 25:
			acc ^= acc >> 7
		case 26:
			acc += 23
		case 27:
			acc -= 29
		case 28:
			acc ^= 0x1234
		case 29:
			acc += u * 3
		case 30:
			acc *= 9
		default:
			acc--
		}
	}
	return acc
}

// 8-byte aligned byte views of word slices, so that programs and native
// code can load words from the context.

func words32(w ...uint32) []byte {
	buf := make([]uint64, (len(w)+1)/2)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	copy(asWords32(b), w)
	return b[:len(w)*4]
}

func wordBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8)
}

func asWords32(b []byte) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func asWords64(b []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}
