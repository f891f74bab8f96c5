package maps

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// progArray is BPF_MAP_TYPE_PROG_ARRAY: MaxEntries slots holding programs
// for tail calls. Programs are opaque values (package vm defines them).
// Program is one atomic load, so bpf_tail_call never locks; a program
// replaced during a run stays alive for as long as the run references it
// (Go's GC).
type progArray struct {
	base
	slots []atomic.Pointer[progSlot]
}

type progSlot struct{ p any }

var _ ProgArrayMap = (*progArray)(nil)

func newProgArray(spec *Spec) *progArray {
	a := &progArray{slots: make([]atomic.Pointer[progSlot], spec.MaxEntries)}
	a.init(spec, a, 1)
	return a
}

func (a *progArray) SetProgram(index uint32, p any) error {
	if index >= uint32(len(a.slots)) {
		return a.errs.tooBig
	}
	if p == nil {
		a.slots[index].Store(nil)
		return nil
	}
	a.slots[index].Store(&progSlot{p})
	return nil
}

func (a *progArray) Program(index uint32) any {
	if index >= uint32(len(a.slots)) {
		return nil
	}
	if s := a.slots[index].Load(); s != nil {
		return s.p
	}
	return nil
}

// Programs cannot read or write a program array directly (the verifier
// forbids it in Linux); the raw API fails or returns nil.

func (a *progArray) LookupElem(unsafe.Pointer, int) unsafe.Pointer { return nil }

func (a *progArray) UpdateElem(_, _ unsafe.Pointer, _ uint64, _ int) error {
	return a.errs.notSupp
}

func (a *progArray) DeleteElem(unsafe.Pointer) error { return a.errs.notSupp }

// Lookup stores the program at key into valueOut, which must be a *any.
func (a *progArray) Lookup(key, valueOut any) error {
	if err := a.checkRead("lookup"); err != nil {
		return err
	}
	kb, err := a.marshalKey(key, "lookup")
	if err != nil {
		return err
	}
	found, err := a.iterValue(kb, valueOut)
	if err != nil {
		return a.wrapf(err, "lookup")
	}
	if !found {
		return a.wrapf(ErrKeyNotExist, "lookup")
	}
	return nil
}

// Update stores value, the program itself, at key. Flags must be UpdateAny
// (like Linux's fd arrays).
func (a *progArray) Update(key, value any, flags UpdateFlags) error {
	if err := a.checkWrite("update"); err != nil {
		return err
	}
	kb, err := a.marshalKey(key, "update")
	if err != nil {
		return err
	}
	if flags != UpdateAny {
		return a.wrapf(ErrInvalid, "update: flags %#x, program arrays take UpdateAny", uint64(flags))
	}
	if value == nil {
		return a.wrapf(ErrInvalid, "update: nil program")
	}
	if err := a.SetProgram(nativeEndian.Uint32(kb), value); err != nil {
		return a.wrapf(err, "update")
	}
	return nil
}

func (a *progArray) LookupAndDelete(key, valueOut any) error {
	return a.wrapf(ErrNotSupported, "lookup and delete")
}

func (a *progArray) iterValue(key []byte, valueOut any) (bool, error) {
	p := a.Program(nativeEndian.Uint32(key))
	if p == nil {
		return false, nil
	}
	switch out := valueOut.(type) {
	case nil:
	case *any:
		*out = p
	default:
		return false, fmt.Errorf("program array values decode into *any, not %T: %w", valueOut, ErrInvalid)
	}
	return true, nil
}

func (a *progArray) goLookup(key, _ []byte) error {
	if a.Program(nativeEndian.Uint32(key)) == nil {
		return a.errs.notExist
	}
	return nil
}

func (a *progArray) goLookupAndDelete(_, _ []byte) error { return a.errs.notSupp }

func (a *progArray) goUpdate(_, _ []byte, _ uint64) error { return a.errs.invalid }

func (a *progArray) goDelete(key []byte) error {
	idx := nativeEndian.Uint32(key)
	if idx >= uint32(len(a.slots)) {
		return a.errs.tooBig
	}
	if a.slots[idx].Swap(nil) == nil {
		return a.errs.notExist
	}
	return nil
}

func (a *progArray) goNextKey(key, next []byte) error {
	return arrayNextKey(key, next, uint32(len(a.slots)), a.errs)
}

func (a *progArray) iterKeys(cursor uint64, dst []byte) ([]byte, uint64, bool, error) {
	return arrayIterKeys(cursor, dst, uint32(len(a.slots)))
}
