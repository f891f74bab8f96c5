package benchset

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/internal/bpfbuild"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
)

// engines returns the engines this platform has.
func engines(t testing.TB) []uebpf.Engine {
	list := []uebpf.Engine{uebpf.EngineInterpreter}
	obj, err := Object("simple")
	if err != nil {
		t.Fatal(err)
	}
	coll, err := uebpf.Load(bytes.NewReader(obj), &uebpf.Options{Engine: uebpf.EngineJIT})
	switch {
	case errors.Is(err, jit.ErrUnsupportedArch):
	case err != nil:
		t.Fatal(err)
	default:
		coll.Close()
		list = append(list, uebpf.EngineJIT)
	}
	return list
}

// Every program returns its expected result on every engine, and so does
// its native equivalent.
func TestSet(t *testing.T) {
	for _, b := range Set {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // switch takes seconds to verify, on each engine
			if got := b.Native(b.Input()); got != b.Want {
				t.Errorf("native: %d, want %d", got, b.Want)
			}
			for _, engine := range engines(t) {
				coll, p, err := b.Load(engine)
				if err != nil {
					t.Fatal(err)
				}
				if !p.Verified() {
					t.Fatalf("%v: not verified", engine)
				}
				ctx := b.Input()
				for run := range 2 { // a second run sees what the first left
					got, err := p.Run(ctx)
					if err != nil || got != b.Want {
						t.Errorf("%v, run %d: %d, %v; want %d", engine, run, got, err, b.Want)
					}
				}
				coll.Close()
			}
		})
	}
}

// The sources still compile with clang-19 (CI has it).
func TestSourcesBuild(t *testing.T) {
	t.Parallel()
	bpfbuild.CheckSources(t, "c/*.bpf.c")
}

func BenchmarkSet(b *testing.B) {
	list := engines(b)
	for _, bm := range Set {
		b.Run(bm.Name, func(b *testing.B) {
			for _, engine := range list {
				b.Run(engine.String(), func(b *testing.B) {
					coll, p, err := bm.Load(engine)
					if err != nil {
						b.Fatal(err)
					}
					defer coll.Close()
					ctx := bm.Input()
					b.ResetTimer()
					for b.Loop() {
						p.Run(ctx)
					}
				})
			}
			if slices.Contains(list, uebpf.EngineJIT) {
				// Unverified: the JIT checks every access.
				b.Run("jit-checked", func(b *testing.B) {
					coll, p, err := bm.LoadUnverified()
					if err != nil {
						b.Fatal(err)
					}
					defer coll.Close()
					ctx := bm.Input()
					b.ResetTimer()
					for b.Loop() {
						p.Run(ctx)
					}
				})
			}
			b.Run("native", func(b *testing.B) {
				ctx := bm.Input()
				for b.Loop() {
					bm.Native(ctx)
				}
			})
		})
	}
}

// BenchmarkLoad1k measures parsing and loading an object with one program
// of about 1000 instructions, a map and global data.
func BenchmarkLoad1k(b *testing.B) {
	obj, err := Object("load1k")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts *uebpf.Options
	}{
		{"verified", nil}, // the default
		{"unverified", &uebpf.Options{SkipVerification: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				coll, err := uebpf.Load(bytes.NewReader(obj), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				coll.Close()
			}
		})
	}
}

func TestLoad1k(t *testing.T) {
	obj, err := Object("load1k")
	if err != nil {
		t.Fatal(err)
	}
	coll, err := uebpf.Load(bytes.NewReader(obj), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if n := len(coll.Program("load1k").VM().Instructions()); n < 1000 {
		t.Errorf("load1k has %d instructions, want about 1000", n)
	}
	if _, err := coll.Program("load1k").Run(make([]byte, 128)); err != nil {
		t.Fatal(err)
	}
}

// lookupKeys is the number of lookups per run of hash_lookup/array_lookup.
const lookupKeys = 256

// BenchmarkMapLookup measures one map lookup from an ELF-loaded program:
// a run looks up 256 keys; ns/lookup is the time per run divided by 256
// (the run's own overhead included).
func BenchmarkMapLookup(b *testing.B) {
	obj, err := Object("maps")
	if err != nil {
		b.Fatal(err)
	}
	for _, engine := range engines(b) {
		coll, err := uebpf.Load(bytes.NewReader(obj), &uebpf.Options{Engine: engine})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hash_1M/%v", engine), func(b *testing.B) {
			keys := fillHash(b, coll.Map("big_hash"))
			benchLookups(b, coll.Program("hash_lookup"), wordBytes(keys))
		})
		b.Run(fmt.Sprintf("hash_1M_one/%v", engine), func(b *testing.B) {
			keys := fillHash(b, coll.Map("big_hash"))
			benchOne(b, coll.Program("hash_lookup_one"), wordBytes(keys[:1]))
		})
		b.Run(fmt.Sprintf("array_one/%v", engine), func(b *testing.B) {
			if err := coll.Map("array").Update(uint32(5), uint64(6), maps.UpdateAny); err != nil {
				b.Fatal(err)
			}
			benchOne(b, coll.Program("array_lookup_one"), words32(5))
		})
		b.Run(fmt.Sprintf("array/%v", engine), func(b *testing.B) {
			keys := make([]uint64, lookupKeys/2)
			k32 := asWords32(wordBytes(keys))
			for i := range k32 {
				k32[i] = uint32(rand.IntN(1024))
			}
			for k := uint32(0); k < 1024; k++ {
				if err := coll.Map("array").Update(k, uint64(k)+1, maps.UpdateAny); err != nil {
					b.Fatal(err)
				}
			}
			benchLookups(b, coll.Program("array_lookup"), wordBytes(keys))
		})
		coll.Close()
	}
}

// hashKeys remembers the filled map between engines: filling 1M entries
// takes a while.
var hashKeys = map[maps.Map][]uint64{}

// fillHash fills m with 1M 8-byte keys and returns lookupKeys of them in
// random order.
func fillHash(b *testing.B, m maps.Map) []uint64 {
	if keys, ok := hashKeys[m]; ok {
		return keys
	}
	rng := rand.New(rand.NewPCG(1, 2))
	all := make([]uint64, 1<<20)
	for i := range all {
		all[i] = rng.Uint64()
		if err := m.UpdateElem(unsafe.Pointer(&all[i]), unsafe.Pointer(&all[i]), 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	keys := make([]uint64, lookupKeys)
	for i := range keys {
		keys[i] = all[rng.IntN(len(all))]
	}
	hashKeys[m] = keys
	return keys
}

// benchOne times runs that make one lookup; subtract BenchmarkSet/simple
// for the lookup alone.
func benchOne(b *testing.B, p *uebpf.Program, ctx []byte) {
	if r0, err := p.Run(ctx); err != nil || r0 == 0 {
		b.Fatalf("%d, %v", r0, err)
	}
	b.ResetTimer()
	for b.Loop() {
		p.Run(ctx)
	}
}

func benchLookups(b *testing.B, p *uebpf.Program, ctx []byte) {
	if r0, err := p.Run(ctx); err != nil || r0 == 0 {
		b.Fatalf("%d, %v", r0, err)
	}
	b.ResetTimer()
	for b.Loop() {
		p.Run(ctx)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/lookupKeys, "ns/lookup")
}
