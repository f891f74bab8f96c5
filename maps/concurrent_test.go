package maps

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestConcurrentAtomicAdds: 8 goroutines add to one value through the
// pointer LookupElem returns while other goroutines update, delete and look
// up other keys from the Go side and the program side. No add may be lost.
func TestConcurrentAtomicAdds(t *testing.T) {
	const workers, adds = 8, 5000
	specs := []Spec{
		{Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 256},
		{Type: PerCPUHash, KeySize: 8, ValueSize: 8, MaxEntries: 256},
		{Type: LRUHash, KeySize: 8, ValueSize: 8, MaxEntries: 256},
		{Type: LRUCPUHash, KeySize: 8, ValueSize: 8, MaxEntries: 256},
		{Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 256},
		{Type: PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 256},
		{Type: LPMTrie, KeySize: 8, ValueSize: 8, MaxEntries: 256, Flags: FlagNoPrealloc},
	}
	for _, spec := range specs {
		t.Run(spec.Type.String(), func(t *testing.T) {
			spec.Name = "c"
			m := mustNew(t, &spec)
			ks := int(spec.KeySize)
			mkKey := func(i uint32) []byte {
				b := make([]byte, ks)
				if spec.Type == LPMTrie {
					nativeEndian.PutUint32(b, 32)
					b[4], b[5] = byte(i>>8), byte(i)
				} else {
					nativeEndian.PutUint32(b, i)
				}
				return b
			}
			hot := mkKey(7)
			zero := make([]byte, m.(interface{ sysValueSize() int }).sysValueSize())
			if err := m.Update(hot, zero, UpdateAny); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var churn sync.WaitGroup
			churn.Add(2)
			go func() { // Go-side churn on other keys
				defer churn.Done()
				rng := rand.New(rand.NewPCG(1, 2))
				out := make([]byte, len(zero))
				for {
					select {
					case <-stop:
						return
					default:
					}
					k := mkKey(100 + uint32(rng.IntN(100)))
					switch rng.IntN(3) {
					case 0:
						_ = m.Update(k, zero, UpdateAny)
					case 1:
						_ = m.Delete(k)
					default:
						_ = m.Lookup(k, out)
					}
				}
			}()
			go func() { // program-side churn on other keys
				defer churn.Done()
				rng := rand.New(rand.NewPCG(3, 4))
				var v [8]byte
				for {
					select {
					case <-stop:
						return
					default:
					}
					k := mkKey(1000 + uint32(rng.IntN(50)))
					if rng.IntN(2) == 0 {
						_ = m.UpdateElem(unsafe.Pointer(&k[0]), unsafe.Pointer(&v), 0, 0)
					} else {
						_ = m.DeleteElem(unsafe.Pointer(&k[0]))
					}
				}
			}()
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cpu := 0
					if spec.Type.HasPerCPUValue() {
						cpu = w % PossibleCPUs()
					}
					for range adds {
						p := m.LookupElem(unsafe.Pointer(&hot[0]), cpu)
						if p == nil {
							t.Error("hot key missing")
							return
						}
						atomic.AddUint64((*uint64)(p), 1)
					}
				}()
			}
			wg.Wait()
			close(stop)
			churn.Wait()
			out := make([]byte, len(zero))
			if err := m.Lookup(hot, out); err != nil {
				t.Fatal(err)
			}
			var total uint64
			for off := 0; off < len(out); off += 8 {
				total += nativeEndian.Uint64(out[off:])
			}
			if total != workers*adds {
				t.Errorf("total %d, want %d: lost updates", total, workers*adds)
			}
		})
	}
}

// TestConcurrentHashStress mixes program-side inserts and deletes of
// overlapping keys with Go-side reads: every value read must belong to its
// key, and the final contents must be consistent.
func TestConcurrentHashStress(t *testing.T) {
	for _, typ := range []Type{Hash, LRUHash} {
		t.Run(typ.String(), func(t *testing.T) {
			const keys = 64
			max := uint32(keys)
			if typ == LRUHash {
				max = keys / 2 // force evictions
			}
			m := mustNew(t, &Spec{Name: "s", Type: typ, KeySize: 12, ValueSize: 16, MaxEntries: max})
			var wg sync.WaitGroup
			var bad atomic.Int64
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 9))
					var key [12]byte
					var val [16]byte
					for range 20000 {
						k := uint32(rng.IntN(keys))
						nativeEndian.PutUint32(key[4:], k)
						nativeEndian.PutUint64(val[:], uint64(k)*3)
						nativeEndian.PutUint64(val[8:], uint64(k)*5)
						switch rng.IntN(4) {
						case 0, 1:
							// A full LRU map evicts: no update may fail,
							// however the evictors contend.
							if err := m.UpdateElem(unsafe.Pointer(&key), unsafe.Pointer(&val), 0, 0); err != nil {
								t.Errorf("update %d: %v", k, err)
								bad.Add(1)
							}
						case 2:
							_ = m.DeleteElem(unsafe.Pointer(&key))
							// Lock-free lookups under churn (the value is
							// not read: the slot may be recycled).
							_ = m.LookupElem(unsafe.Pointer(&key), 0)
						default:
							var out [16]byte
							if m.Lookup(key[:], out[:]) == nil && out != val {
								bad.Add(1)
							}
						}
					}
				}()
			}
			wg.Wait()
			if bad.Load() != 0 {
				t.Fatalf("%d inconsistent operations", bad.Load())
			}
			n := 0
			var key [12]byte
			var val [16]byte
			it := m.Iterate()
			for it.Next(key[:], val[:]) {
				k := nativeEndian.Uint32(key[4:])
				if nativeEndian.Uint64(val[:]) != uint64(k)*3 {
					t.Errorf("key %d has value %x", k, val)
				}
				n++
			}
			if it.Err() != nil || n > int(max) {
				t.Errorf("%d keys (max %d): %v", n, max, it.Err())
			}
		})
	}
}

// TestConcurrentLPM runs lock-free lookups against concurrent inserts and
// deletes of other prefixes; a stable prefix must always be found.
func TestConcurrentLPM(t *testing.T) {
	m := newLPM(t, 1024)
	if err := m.Update(pfx("10.0.0.0/8"), uint32(8), UpdateAny); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var churn, wg sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		rng := rand.New(rand.NewPCG(5, 6))
		for {
			select {
			case <-stop:
				return
			default:
			}
			p := pfx(fmt.Sprintf("%d.%d.0.0/%d", 11+rng.IntN(50), rng.IntN(256), 9+rng.IntN(8)))
			if rng.IntN(2) == 0 {
				_ = m.Update(p, uint32(1), UpdateAny)
			} else {
				_ = m.Delete(p)
			}
		}
	}()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := lpmKey4{32, [4]byte{10, byte(w), 1, 1}}
			for range 20000 {
				p := m.LookupElem(unsafe.Pointer(&k), 0)
				if p == nil || atomic.LoadUint32((*uint32)(p)) != 8 {
					t.Error("stable prefix not found")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	churn.Wait()
}
