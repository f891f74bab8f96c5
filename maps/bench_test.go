package maps

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/internal/cputime"
)

// cpuTime reports the CPU time of the benchmark's thread per operation
// when the returned function runs (deferred, after the loop): on a shared
// machine it leaves out the time other processes ran instead of us.
func cpuTime(b *testing.B) func() {
	runtime.LockOSThread()
	start := cputime.Thread()
	return func() {
		b.ReportMetric(float64((cputime.Thread()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

// Program-side hot paths, called through the Map interface like a helper
// does. Run with -benchmem: none of them may allocate.

func BenchmarkArrayLookupElem(b *testing.B) {
	m := mustNew(b, &Spec{Name: "a", Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	keys := make([]uint32, 1024)
	for i := range keys {
		keys[i] = uint32(i*7) % 1024
	}
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		p := m.LookupElem(unsafe.Pointer(&keys[i&1023]), 0)
		*(*uint64)(p)++
		i++
	}
}

func BenchmarkPerCPUArrayLookupElem(b *testing.B) {
	m := mustNew(b, &Spec{Name: "a", Type: PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	b.ReportAllocs()
	defer cpuTime(b)()
	k := uint32(5)
	for b.Loop() {
		p := m.LookupElem(unsafe.Pointer(&k), 0)
		*(*uint64)(p)++
	}
}

// hashKeys returns n distinct pseudo-random 8-byte keys in random order.
func hashKeys(n int) []uint64 {
	rng := rand.New(rand.NewPCG(1, 1))
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)*0x9E3779B97F4A7C15 + 1
	}
	rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

func filledHash(b testing.TB, typ Type, n int) (Map, []uint64) {
	m := mustNew(b, &Spec{Name: "h", Type: typ, KeySize: 8, ValueSize: 8, MaxEntries: uint32(n)})
	keys := hashKeys(n)
	for _, k := range keys {
		if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&k), 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	return m, keys
}

func BenchmarkHashLookupElem(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1K", 1 << 10}, {"1M", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) { benchHashLookups(b, Hash, size.n) })
	}
}

// benchHashLookups looks up every key of a full hash map of typ, in a
// shuffled order, through the program-side interface.
func benchHashLookups(b *testing.B, typ Type, n int) {
	m, keys := filledHash(b, typ, n)
	mask := len(keys) - 1
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		if m.LookupElem(unsafe.Pointer(&keys[i&mask]), 0) == nil {
			b.Fatal("missing")
		}
		i++
	}
}

// BenchmarkHashHelperPath is the whole bpf_map_lookup_elem helper as package
// helpers would write it: resolve the map, look up, turn the pointer into r0.
func BenchmarkHashHelperPath(b *testing.B) {
	m, keys := filledHash(b, Hash, 1<<20)
	table := []Map{m}
	mask := len(keys) - 1
	helper := func(r1 uint64, r2 unsafe.Pointer) uint64 {
		mp := table[r1]
		return uint64(uintptr(mp.LookupElem(r2, 0)))
	}
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		if helper(0, unsafe.Pointer(&keys[i&mask])) == 0 {
			b.Fatal("missing")
		}
		i++
	}
}

func BenchmarkHashLookupElemParallel(b *testing.B) {
	m, keys := filledHash(b, Hash, 1<<20)
	mask := len(keys) - 1
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(keys))
		for pb.Next() {
			m.LookupElem(unsafe.Pointer(&keys[i&mask]), 0)
			i++
		}
	})
}

func BenchmarkHashLookupElemMiss(b *testing.B) {
	m, _ := filledHash(b, Hash, 1<<16)
	b.ReportAllocs()
	defer cpuTime(b)()
	k := uint64(12345)
	for b.Loop() {
		if m.LookupElem(unsafe.Pointer(&k), 0) != nil {
			b.Fatal("found")
		}
	}
}

func BenchmarkHashUpdateElemExisting(b *testing.B) {
	m, keys := filledHash(b, Hash, 1<<16)
	mask := len(keys) - 1
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	v := uint64(1)
	for b.Loop() {
		if err := m.UpdateElem(unsafe.Pointer(&keys[i&mask]), unsafe.Pointer(&v), 0, 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkHashInsertDelete inserts and deletes keys in a map one short of
// full. It cycles through 1024 new keys: with a single key the figure
// would depend on where the map's random seed puts that key.
func BenchmarkHashInsertDelete(b *testing.B) {
	m, keys := filledHash(b, Hash, 1<<10)
	if err := m.DeleteElem(unsafe.Pointer(&keys[0])); err != nil {
		b.Fatal(err)
	}
	fresh := make([]uint64, 1<<10)
	for i := range fresh {
		fresh[i] = uint64(i)<<40 | 1<<63
	}
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		k := unsafe.Pointer(&fresh[i&(len(fresh)-1)])
		if err := m.UpdateElem(k, k, uint64(UpdateNoExist), 0); err != nil {
			b.Fatal(err)
		}
		if err := m.DeleteElem(k); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkPerCPUHashLookupElem(b *testing.B) { benchHashLookups(b, PerCPUHash, 1<<16) }

func BenchmarkLRULookupElem(b *testing.B) { benchHashLookups(b, LRUHash, 1<<16) }

// BenchmarkLRUUpdateEvict inserts new keys into a full LRU map: every
// update evicts.
func BenchmarkLRUUpdateEvict(b *testing.B) {
	m, _ := filledHash(b, LRUHash, 1<<12)
	b.ReportAllocs()
	defer cpuTime(b)()
	k := uint64(1 << 50)
	for b.Loop() {
		if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&k), 0, 0); err != nil {
			b.Fatal(err)
		}
		k++
	}
}

func BenchmarkLPMLookupElem(b *testing.B) {
	m := newLPM(b, 4096)
	rng := rand.New(rand.NewPCG(2, 2))
	for range 2000 {
		k := lpmKey4{uint32(8 + rng.IntN(25)), [4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), 0}}
		_ = m.Update(k, uint32(1), UpdateAny)
	}
	keys := make([]lpmKey4, 1024)
	for i := range keys {
		keys[i] = lpmKey4{32, [4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(i)}}
	}
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		m.LookupElem(unsafe.Pointer(&keys[i&1023]), 0)
		i++
	}
}

func BenchmarkQueuePushPop(b *testing.B) {
	m := mustNew(b, &Spec{Name: "q", Type: Queue, ValueSize: 8, MaxEntries: 1024})
	q := m.(QueueMap)
	b.ReportAllocs()
	defer cpuTime(b)()
	var v, out uint64
	for b.Loop() {
		if err := q.PushElem(unsafe.Pointer(&v), 0); err != nil {
			b.Fatal(err)
		}
		if err := q.PopElem(unsafe.Pointer(&out)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRingBufOutput(b *testing.B) {
	m := mustNew(b, &Spec{Name: "rb", Type: RingBuf, MaxEntries: 1 << 20})
	rb := m.(*ringBuf)
	data := make([]byte, 64)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	defer cpuTime(b)()
	for b.Loop() {
		if err := rb.Output(data, RBNoWakeup); err != nil {
			b.Fatal(err)
		}
		buf, _, _, _ = rb.consume(buf)
	}
}

func BenchmarkRingBufReserveSubmit(b *testing.B) {
	m := mustNew(b, &Spec{Name: "rb", Type: RingBuf, MaxEntries: 1 << 20})
	rb := m.(*ringBuf)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	defer cpuTime(b)()
	for b.Loop() {
		p := rb.Reserve(64)
		if p == nil {
			b.Fatal("full")
		}
		*(*uint64)(p) = 1
		rb.Submit(p, 0)
		buf, _, _, _ = rb.consume(buf)
	}
}

func BenchmarkProgArrayProgram(b *testing.B) {
	m := mustNew(b, &Spec{Name: "p", Type: ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 8})
	pa := m.(ProgArrayMap)
	_ = pa.SetProgram(3, &fakeProg{"x"})
	b.ReportAllocs()
	defer cpuTime(b)()
	for b.Loop() {
		if pa.Program(3) == nil {
			b.Fatal("nil")
		}
	}
}

// Go-side API, for comparison: lookups of every key of a full 1K map (not
// of one key, whose cost would depend on the map's random seed).
func BenchmarkGoLookup(b *testing.B) {
	m, keys := filledHash(b, Hash, 1<<10)
	mask := len(keys) - 1
	b.ReportAllocs()
	defer cpuTime(b)()
	var v uint64
	i := 0
	for b.Loop() {
		if err := m.Lookup(keys[i&mask], &v); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkBaselineGoMap is Go's built-in map on the same keys: a reference
// point for the hash map figures on a given (possibly shared) machine.
func BenchmarkBaselineGoMap(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1K", 1 << 10}, {"1M", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			keys := hashKeys(size.n)
			m := make(map[uint64]uint64, size.n)
			for _, k := range keys {
				m[k] = k
			}
			mask := len(keys) - 1
			i := 0
			var sum uint64
			for b.Loop() {
				sum += m[keys[i&mask]]
				i++
			}
			_ = sum
		})
	}
}
