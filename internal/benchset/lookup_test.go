//go:build linux

package benchset

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/cputime"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// BenchmarkLookupCost separates what a lookup from an interpreted program
// costs from the loop around it and from the machine's memory latency,
// all in one run:
//
//   - hash_hot: the 256 keys of MapLookup/hash_1M, the same every run, so
//     after the first run their elements are in the caches;
//   - hash_cold: every run takes the next 256 of all 1M keys (in random
//     order), so almost every lookup misses the caches and the TLB;
//   - loop_hot, loop_cold: the same program with the helper call replaced
//     by "r0 = r2" (the "value" is the key itself): the loop's own cost;
//   - array, array_loop: the same for array_lookup.
//
// ns/lookup minus the matching loop's ns/lookup is the lookup alone.
// BenchmarkMissLatency gives the latency of one dependent miss for scale.
func BenchmarkLookupCost(b *testing.B) {
	obj, err := Object("maps")
	if err != nil {
		b.Fatal(err)
	}
	coll, err := uebpf.Load(bytes.NewReader(obj), &uebpf.Options{Engine: uebpf.EngineInterpreter})
	if err != nil {
		b.Fatal(err)
	}
	defer coll.Close()
	hash := coll.Program("hash_lookup").VM()
	hashLoop := withoutLookup(b, hash)
	hot := wordBytes(fillHash(b, coll.Map("big_hash")))
	cold := coldKeys(b, coll.Map("big_hash"))

	b.Run("hash_hot", func(b *testing.B) { benchVM(b, hash, func(int) []byte { return hot }) })
	b.Run("hash_cold", func(b *testing.B) { benchVM(b, hash, cold) })
	b.Run("loop_hot", func(b *testing.B) { benchVM(b, hashLoop, func(int) []byte { return hot }) })
	b.Run("loop_cold", func(b *testing.B) { benchVM(b, hashLoop, cold) })

	array := coll.Program("array_lookup").VM()
	arrayLoop := withoutLookup(b, array)
	// 256 u32 keys, then room for the 8-byte loads of the loop variant.
	ctx := make([]uint64, lookupKeys)
	k32 := asWords32(wordBytes(ctx[:lookupKeys/2]))
	for i := range k32 {
		k32[i] = uint32(rand.IntN(1024))
	}
	for k := uint32(0); k < 1024; k++ {
		if err := coll.Map("array").Update(k, uint64(k)+1, maps.UpdateAny); err != nil {
			b.Fatal(err)
		}
	}
	actx := wordBytes(ctx)
	b.Run("array", func(b *testing.B) { benchVM(b, array, func(int) []byte { return actx }) })
	b.Run("array_loop", func(b *testing.B) { benchVM(b, arrayLoop, func(int) []byte { return actx }) })
}

// withoutLookup returns p with its helper call replaced by r0 = r2.
func withoutLookup(b *testing.B, p *vm.Program) *vm.Program {
	insns := append([]asm.Instruction(nil), p.Instructions()...)
	n := 0
	for i, ins := range insns {
		if ins.Opcode == asm.OpCall && ins.Src == 0 {
			insns[i] = asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 0, Src: 2}
			n++
		}
	}
	if n != 1 {
		b.Fatalf("%s has %d helper calls, want 1", p.Name(), n)
	}
	q, err := vm.Load(&vm.ProgramSpec{Name: p.Name() + "_loop", Instructions: insns, Maps: p.Maps()},
		&vm.Options{Helpers: p.Helpers()})
	if err != nil {
		b.Fatal(err)
	}
	return q
}

// coldKeys returns contexts of 256 keys that walk through all keys of the
// filled map in random order, a different window every run.
func coldKeys(b *testing.B, m maps.Map) func(int) []byte {
	fillHash(b, m)
	all := make([]uint64, 0, m.MaxEntries())
	var k uint64
	it := m.Iterate()
	var v uint64
	for it.Next(&k, &v) {
		all = append(all, k)
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	buf := wordBytes(all)
	windows := len(all) / lookupKeys
	return func(i int) []byte {
		off := (i % windows) * lookupKeys * 8
		return buf[off : off+lookupKeys*8]
	}
}

// benchVM runs p on the interpreter with the context of run i from ctx.
func benchVM(b *testing.B, p *vm.Program, ctx func(int) []byte) {
	if r0, err := p.Run(ctx(0)); err != nil || r0 == 0 {
		b.Fatalf("%d, %v", r0, err)
	}
	i := 0
	// The machine is shared: besides wall time, report the thread's CPU
	// time, which leaves out the time other processes ran instead of us.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		if i == 0 {
			cpu = -cputime.Thread()
		}
		p.Run(ctx(i))
		i++
	}
	cpu += cputime.Thread()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/lookupKeys, "ns/lookup")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/lookupKeys, "cpu-ns/lookup")
}

// BenchmarkMissLatency chases pointers through a random cycle of 64-byte
// lines spread over 48 MiB, about the memory of the 1M-entry map: each
// step is one dependent load that misses the caches close to the core.
// The Go heap gets 4 KiB pages here (transparent huge pages are
// madvise-only on Linux by default and Go does not ask for them); the
// "huge" variant uses an mmap with MADV_HUGEPAGE, so it shows what TLB
// misses add.
func BenchmarkMissLatency(b *testing.B) {
	const size = 48 << 20
	b.Run("go_heap", func(b *testing.B) {
		chase(b, wordBytes(make([]uint64, size/8)))
	})
	b.Run("huge", func(b *testing.B) {
		mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			b.Skip("mmap:", err)
		}
		defer unix.Munmap(mem)
		if err := unix.Madvise(mem, unix.MADV_HUGEPAGE); err != nil {
			b.Skip("madvise:", err)
		}
		chase(b, mem)
	})
}

func chase(b *testing.B, mem []byte) {
	lines := len(mem) / 64
	perm := rand.Perm(lines)
	base := unsafe.Pointer(unsafe.SliceData(mem))
	for i := range perm {
		next := perm[(i+1)%lines]
		*(*uintptr)(unsafe.Add(base, perm[i]*64)) = uintptr(unsafe.Add(base, next*64))
	}
	p := unsafe.Add(base, perm[0]*64)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cputime.Thread()
	b.ResetTimer()
	for b.Loop() {
		p = *(*unsafe.Pointer)(p)
	}
	b.ReportMetric(float64((cputime.Thread()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	sink = p
}

var sink unsafe.Pointer
