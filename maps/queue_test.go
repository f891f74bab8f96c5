package maps

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

func TestQueueStackOrder(t *testing.T) {
	tests := []struct {
		typ  Type
		want []uint32 // pop order after pushing 1..3 and, with BPF_EXIST, 4
	}{
		{Queue, []uint32{2, 3, 4}},
		{Stack, []uint32{4, 3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			m := mustNew(t, &Spec{Name: "q", Type: tt.typ, ValueSize: 4, MaxEntries: 3})
			q := m.(QueueMap)
			push := func(v uint32, flags uint64) error { return q.PushElem(unsafe.Pointer(&v), flags) }
			var out uint32
			if err := q.PopElem(unsafe.Pointer(&out)); !errors.Is(err, ErrEmpty) || !errors.Is(err, ErrKeyNotExist) || Errno(err) != -2 {
				t.Errorf("pop of empty: %v", err)
			}
			if err := q.PeekElem(unsafe.Pointer(&out)); !errors.Is(err, ErrEmpty) {
				t.Errorf("peek of empty: %v", err)
			}
			for v := uint32(1); v <= 3; v++ {
				if err := push(v, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := push(4, 0); !errors.Is(err, ErrMapFull) || Errno(err) != -7 {
				t.Errorf("push to full: %v", err)
			}
			if err := push(4, uint64(UpdateNoExist)); !errors.Is(err, ErrInvalid) {
				t.Errorf("push with BPF_NOEXIST: %v", err)
			}
			if err := push(4, 4); !errors.Is(err, ErrInvalid) {
				t.Errorf("push with bad flags: %v", err)
			}
			if err := push(4, uint64(UpdateExist)); err != nil { // drops the oldest (1)
				t.Fatalf("push with BPF_EXIST: %v", err)
			}
			if err := q.PeekElem(unsafe.Pointer(&out)); err != nil || out != tt.want[0] {
				t.Errorf("peek: %d, %v", out, err)
			}
			var got []uint32
			for {
				if err := q.PopElem(unsafe.Pointer(&out)); err != nil {
					break
				}
				got = append(got, out)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("pop order %v, want %v", got, tt.want)
			}
			// Wrap around many times.
			for i := range uint32(20) {
				_ = push(i, 0)
				_ = push(i+100, 0)
				if err := q.PopElem(unsafe.Pointer(&out)); err != nil {
					t.Fatal(err)
				}
				want := i
				if tt.typ == Stack {
					want = i + 100
				}
				if out != want {
					t.Fatalf("round %d: popped %d, want %d", i, out, want)
				}
				_ = q.PopElem(unsafe.Pointer(&out))
			}
			k := uint32(0)
			if m.LookupElem(unsafe.Pointer(&k), 0) != nil {
				t.Error("LookupElem on a queue is not nil")
			}
			if err := m.DeleteElem(nil); !errors.Is(err, ErrInvalid) {
				t.Errorf("DeleteElem: %v", err)
			}
		})
	}
}

func TestQueueGoSide(t *testing.T) {
	m := mustNew(t, &Spec{Name: "q", Type: Queue, ValueSize: 8, MaxEntries: 4})
	for i := range uint64(3) {
		if err := m.Update(nil, i+10, UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	var v uint64
	if err := m.Lookup(nil, &v); err != nil || v != 10 {
		t.Errorf("Lookup (peek): %d %v", v, err)
	}
	if err := m.LookupAndDelete(nil, &v); err != nil || v != 10 {
		t.Errorf("LookupAndDelete (pop): %d %v", v, err)
	}
	if err := m.Lookup(nil, &v); err != nil || v != 11 {
		t.Errorf("Lookup after pop: %d %v", v, err)
	}
	if err := m.Update(uint32(1), uint64(1), UpdateAny); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update with a key: %v", err)
	}
	if err := m.Delete(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Delete: %v", err)
	}
	var k uint32
	if err := m.NextKey(nil, &k); !errors.Is(err, ErrInvalid) {
		t.Errorf("NextKey: %v", err)
	}
	if it := m.Iterate(); it.Next(nil, nil) || !errors.Is(it.Err(), ErrInvalid) {
		t.Errorf("Iterate: %v", it.Err())
	}
	// UpdateElem pushes like bpf(2) with a NULL key.
	x := uint64(99)
	if err := m.UpdateElem(nil, unsafe.Pointer(&x), 0, 0); err != nil {
		t.Fatal(err)
	}
	for m.LookupAndDelete(nil, &v) == nil {
	}
	if v != 99 {
		t.Errorf("last popped %d, want 99", v)
	}
}
