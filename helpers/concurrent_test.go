package helpers_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
)

// progAtomicAdd looks up ctx[0] and atomically adds 1 to the value.
const progAtomicAdd = `
	mov %r2, %r1
	lddw %r1, map_by_fd(0)
	call 1
	jeq %r0, 0, out
	mov %r1, 1
	lock add [%r0], %r1
	mov %r0, 0
	exit
out:
	mov %r0, 1
	exit`

// Eight goroutines add to one value through lookup + lock add while Go
// updates other keys: no update is lost.
func TestConcurrentAtomicAdd(t *testing.T) {
	const goroutines, runs = 8, 2000
	for _, spec := range []maps.Spec{
		{Type: maps.Array, KeySize: 8, ValueSize: 8, MaxEntries: 16},
		{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 64},
		{Type: maps.LRUHash, KeySize: 8, ValueSize: 8, MaxEntries: 64},
	} {
		if spec.Type == maps.Array {
			spec.KeySize = 4
		}
		t.Run(spec.Type.String(), func(t *testing.T) {
			m := newMap(t, spec)
			key := make([]byte, spec.KeySize)
			if err := m.Update(key, uint64(0), maps.UpdateAny); err != nil {
				t.Fatal(err)
			}
			p := load(t, progAtomicAdd, nil, m)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					ctx := make([]byte, 8)
					for range runs {
						if r0, err := p.Run(ctx); err != nil || r0 != 0 {
							t.Errorf("goroutine %d: r0 = %d, %v", g, r0, err)
							return
						}
					}
				})
			}
			wg.Go(func() { // Go-side churn on other keys
				k := make([]byte, spec.KeySize)
				for i := range runs {
					k[0] = byte(1 + i%8)
					m.Update(k, uint64(i), maps.UpdateAny)
					if spec.Type != maps.Array && i%3 == 0 {
						m.Delete(k)
					}
				}
			})
			wg.Wait()
			var v uint64
			if err := m.Lookup(key, &v); err != nil || v != goroutines*runs {
				t.Errorf("value %d (%v), want %d", v, err, goroutines*runs)
			}
		})
	}
}

// trace_printk lines from concurrent runs never interleave, and the ring
// buffer gets every record.
func TestConcurrentOutput(t *testing.T) {
	var out bytes.Buffer
	set := helpers.Standard(&helpers.Config{Output: &out})
	rb, rd := ringBuf(t, 1<<16)
	p := load(t, `
		mov %r6, %r1
		mov %r1, %r6
		mov %r2, 16
		ldxdw %r3, [%r6+16]
		call 6
		lddw %r1, map_by_fd(0)
		mov %r2, %r6
		add %r2, 16
		mov %r3, 8
		mov %r4, 0
		call 130
		exit`, set, rb)
	const goroutines, runs = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			ctx := make([]byte, 24)
			copy(ctx, "line %05d\x00")
			for i := range runs {
				binary.NativeEndian.PutUint64(ctx[16:], uint64(g*runs+i))
				if r0, err := p.Run(ctx); err != nil || r0 != 0 {
					t.Errorf("r0 = %d, %v", r0, err)
					return
				}
			}
		})
	}
	records := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for records < goroutines*runs {
			if _, err := rd.Read(); err != nil {
				t.Error(err)
				return
			}
			records++
		}
	}()
	wg.Wait()
	<-done
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != goroutines*runs {
		t.Fatalf("%d lines, want %d", len(lines), goroutines*runs)
	}
	for _, l := range lines {
		if len(l) != len("line 00000") || !strings.HasPrefix(l, "line ") {
			t.Fatalf("line %q", l)
		}
	}
	if records != goroutines*runs {
		t.Errorf("%d records", records)
	}
}
