package maps

import (
	"errors"
	"testing"
	"unsafe"
)

type fakeProg struct{ name string }

func TestProgArray(t *testing.T) {
	m := mustNew(t, &Spec{Name: "jmp", Type: ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 4})
	pa := m.(ProgArrayMap)
	p1, p2 := &fakeProg{"one"}, &fakeProg{"two"}
	if pa.Program(0) != nil || pa.Program(100) != nil {
		t.Error("empty slot not nil")
	}
	if err := pa.SetProgram(1, p1); err != nil {
		t.Fatal(err)
	}
	if err := pa.SetProgram(4, p1); !errors.Is(err, ErrTooBig) {
		t.Errorf("SetProgram out of range: %v", err)
	}
	if got := pa.Program(1); got != p1 {
		t.Errorf("Program(1) = %v", got)
	}
	if err := m.Update(uint32(2), p2, UpdateAny); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(uint32(2), p2, UpdateNoExist); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update with NoExist: %v", err)
	}
	var got any
	if err := m.Lookup(uint32(2), &got); err != nil || got != p2 {
		t.Errorf("Lookup: %v %v", got, err)
	}
	if err := m.Lookup(uint32(0), &got); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("Lookup of empty slot: %v", err)
	}
	var keys []uint32
	var k uint32
	it := m.Iterate()
	for it.Next(&k, &got) {
		keys = append(keys, k)
	}
	if it.Err() != nil || len(keys) != 2 || keys[0] != 1 || keys[1] != 2 {
		t.Errorf("Iterate: %v %v", keys, it.Err())
	}
	if err := m.Delete(uint32(1)); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(uint32(1)); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("second Delete: %v", err)
	}
	if err := pa.SetProgram(2, nil); err != nil || pa.Program(2) != nil {
		t.Errorf("SetProgram(nil): %v", err)
	}
	key := uint32(1)
	if m.LookupElem(unsafe.Pointer(&key), 0) != nil {
		t.Error("LookupElem not nil")
	}
	if err := m.UpdateElem(unsafe.Pointer(&key), unsafe.Pointer(&key), 0, 0); !errors.Is(err, ErrNotSupported) {
		t.Errorf("UpdateElem: %v", err)
	}
}
