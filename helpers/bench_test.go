package helpers_test

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// The benchmarks run interpreted programs that call a helper callsPerRun
// times in a loop, and report per helper call:
//
//   - ns/call: wall time, the loop's few instructions included;
//   - cpu-ns/call: the process's CPU time for the same, which is steadier
//     on a machine shared with other work.
//
// BenchmarkHelperCallOverhead (an empty helper) is the interpreter's part
// of every call; BenchmarkHelperDirect is the helpers' part alone.
const callsPerRun = 1000

func benchProgram(b *testing.B, src string, set vm.Helpers, ms ...vm.Map) *vm.Program {
	b.Helper()
	if set == nil {
		set = helpers.Standard(nil)
	}
	return load(b, src, set, ms...)
}

// runBench runs p on ctx until the benchmark ends; next, if not nil,
// prepares the context of each run.
func runBench(b *testing.B, p *vm.Program, ctx []byte, want uint64, next func(ctx []byte)) {
	b.Helper()
	env := vm.NewEnv()
	run := func() uint64 {
		env.Reset() // drops the regions helpers added
		env.SetContext(ctx)
		r0, err := p.Exec(env)
		if err != nil {
			b.Fatal(err)
		}
		return r0
	}
	if got := run(); got != want {
		b.Fatalf("r0 = %d, want %d", got, want)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if next != nil {
			next(ctx)
		}
		run()
	}
	calls := float64(b.N) * callsPerRun
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/calls, "ns/call")
	b.ReportMetric(float64(cpuTime()-cpu0)/calls, "cpu-ns/call")
}

// cpuTime is the CPU time the process has used, in ns.
func cpuTime() int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return unix.TimevalToNsec(ru.Utime) + unix.TimevalToNsec(ru.Stime)
}

// progLookupLoop looks up the 8-byte keys ctx[0], ctx[0]+1, ... (1000 of
// them) and returns the number of hits.
const progLookupLoop = `
	ldxdw %r6, [%r1]
	mov %r8, %r6
	add %r8, 1000
	mov %r7, 0
loop:
	stxdw [%r10-8], %r6
	lddw %r1, map_by_fd(0)
	mov %r2, %r10
	add %r2, -8
	call 1
	jeq %r0, 0, miss
	add %r7, 1
miss:
	add %r6, 1
	jlt %r6, %r8, loop
	mov %r0, %r7
	exit`

// progUpdateLoop stores ctx[8] under the keys ctx[0], ctx[0]+1, ...
const progUpdateLoop = `
	ldxdw %r6, [%r1]
	ldxdw %r9, [%r1+8]
	stxdw [%r10-16], %r9
	mov %r8, %r6
	add %r8, 1000
	mov %r7, 0
loop:
	stxdw [%r10-8], %r6
	lddw %r1, map_by_fd(0)
	mov %r2, %r10
	add %r2, -8
	mov %r3, %r10
	add %r3, -16
	mov %r4, 0
	call 2
	jne %r0, 0, fail
	add %r7, 1
fail:
	add %r6, 1
	jlt %r6, %r8, loop
	mov %r0, %r7
	exit`

const hashEntries = 1 << 20

func filledHash(b *testing.B) maps.Map {
	m := newMap(b, maps.Spec{Name: "h", Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: hashEntries})
	var k, v [8]byte
	for i := range uint64(hashEntries) {
		binary.NativeEndian.PutUint64(k[:], i)
		if err := m.Update(k[:], v[:], maps.UpdateAny); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// keyWalk is a next function that moves the 1000 keys of a run through
// the whole map, so lookups mostly miss the CPU caches ("cold"); without
// it every run uses the same 1000 keys ("hot").
func keyWalk(ctx []byte) {
	k := binary.NativeEndian.Uint64(ctx) + callsPerRun
	if k+callsPerRun > hashEntries {
		k = 0
	}
	binary.NativeEndian.PutUint64(ctx, k)
}

func BenchmarkMapLookupHash(b *testing.B) {
	m := filledHash(b)
	p := benchProgram(b, progLookupLoop, nil, m)
	b.Run("hot", func(b *testing.B) { runBench(b, p, make([]byte, 16), callsPerRun, nil) })
	b.Run("cold", func(b *testing.B) { runBench(b, p, make([]byte, 16), callsPerRun, keyWalk) })
}

func BenchmarkMapLookupArray(b *testing.B) {
	m := newMap(b, maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: callsPerRun})
	runBench(b, benchProgram(b, progLookupLoop, nil, m), make([]byte, 16), callsPerRun, nil)
}

func BenchmarkMapUpdateHash(b *testing.B) {
	m := filledHash(b)
	p := benchProgram(b, progUpdateLoop, nil, m)
	b.Run("hot", func(b *testing.B) { runBench(b, p, make([]byte, 16), callsPerRun, nil) })
	b.Run("cold", func(b *testing.B) { runBench(b, p, make([]byte, 16), callsPerRun, keyWalk) })
}

// progCallLoop calls helper NUM 1000 times.
const progCallLoop = `
	mov %r6, 0
loop:
	call NUM
	add %r6, 1
	jlt %r6, 1000, loop
	mov %r0, %r6
	exit`

func BenchmarkKtime(b *testing.B) {
	for _, h := range []struct {
		name string
		num  int
	}{
		{"monotonic", helpers.KtimeGetNs},
		{"boot", helpers.KtimeGetBootNs},
	} {
		b.Run(h.name, func(b *testing.B) {
			runBench(b, benchProgram(b, replace(progCallLoop, "NUM", itoa(h.num)), nil), nil, callsPerRun, nil)
		})
	}
}

func BenchmarkHelperCallOverhead(b *testing.B) {
	set := vm.Helpers{}
	helpers.Register(set, helpers.FirstApplicationHelper, "empty", func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }, nil)
	runBench(b, benchProgram(b, replace(progCallLoop, "NUM", "0x10000"), set), nil, callsPerRun, nil)
}

// BenchmarkHelperDirect calls map_lookup_elem from Go, inside a run, to
// measure the helper without the interpreter's dispatch.
func BenchmarkHelperDirect(b *testing.B) {
	for _, spec := range []maps.Spec{
		{Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1024},
		{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 1024},
	} {
		b.Run("lookup_"+spec.Type.String(), func(b *testing.B) {
			m := newMap(b, spec)
			if err := m.Update(make([]byte, spec.KeySize), uint64(1), maps.UpdateAny); err != nil {
				b.Fatal(err)
			}
			set := helpers.Standard(nil)
			lookup := set[helpers.MapLookupElem].Func
			helpers.Register(set, helpers.FirstApplicationHelper, "bench", func(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
				hits := uint64(0)
				for range callsPerRun {
					if lookup(env, r1, r2, 0, 0, 0) != 0 {
						hits++
					}
				}
				return hits
			}, nil)
			p := benchProgram(b, `
				stdw [%r10-8], 0
				lddw %r1, map_by_fd(0)
				mov %r2, %r10
				add %r2, -8
				call 0x10000
				exit`, set, m)
			runBench(b, p, nil, callsPerRun, nil)
		})
	}
}

// BenchmarkHelperDirectUpdate calls map_update_elem from Go, inside a run,
// on the existing u32 keys of a hash map (the benchmark set's
// map_hash_update): the helper and the map's update without the engine's
// dispatch.
func BenchmarkHelperDirectUpdate(b *testing.B) {
	m := newMap(b, maps.Spec{Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	for k := range uint32(1024) {
		if err := m.Update(k, uint64(k), maps.UpdateAny); err != nil {
			b.Fatal(err)
		}
	}
	set := helpers.Standard(nil)
	update := set[helpers.MapUpdateElem].Func
	helpers.Register(set, helpers.FirstApplicationHelper, "bench", func(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
		kp, _ := env.Pointer(r2, 4, true)
		key := (*uint32)(kp)
		ok := uint64(0)
		for i := range uint32(callsPerRun) {
			*key = i & 1023
			if update(env, r1, r2, r3, 0, 0) == 0 {
				ok++
			}
		}
		return ok
	}, nil)
	p := benchProgram(b, `
		stdw [%r10-8], 0
		stdw [%r10-16], 7
		lddw %r1, map_by_fd(0)
		mov %r2, %r10
		add %r2, -8
		mov %r3, %r10
		add %r3, -16
		call 0x10000
		exit`, set, m)
	runBench(b, p, nil, callsPerRun, nil)
}
