package maps

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Map is a userspace eBPF map.
//
// The raw-pointer methods (LookupElem, UpdateElem, DeleteElem) are the
// program side: helper functions call them while an eBPF program runs. They
// do not allocate, are safe for concurrent callers, and take pointers to
// KeySize / ValueSize bytes that the caller guarantees are valid. Their errors
// are preallocated, name the map, and convert to a helper's return value with
// Errno.
//
// The other methods are the Go side, in the style of cilium/ebpf's *ebpf.Map:
// keys and values are Go values encoded as described in the package
// documentation.
type Map interface {
	Name() string
	Type() Type
	KeySize() uint32
	ValueSize() uint32
	MaxEntries() uint32
	Flags() uint32
	// ReadOnlyProg and WriteOnlyProg report BPF_F_RDONLY_PROG and
	// BPF_F_WRONLY_PROG. The raw-pointer API does not enforce them (as in the
	// kernel, where the verifier does): helpers and the verifier must.
	ReadOnlyProg() bool
	WriteOnlyProg() bool
	// Spec returns a copy of the spec the map was created from.
	Spec() *Spec
	String() string

	// LookupElem returns a pointer to the value stored under key, or nil if
	// there is none. For per-CPU maps it is the slot of the given cpu (nil if
	// cpu is not in [0, PossibleCPUs())); other maps ignore cpu. The pointer
	// addresses ValueSize bytes, is 8-byte aligned, and stays valid memory for
	// the life of the map, even if the element is deleted (see the package
	// documentation on element reuse).
	LookupElem(key unsafe.Pointer, cpu int) unsafe.Pointer
	// UpdateElem stores ValueSize bytes from value under key. flags is
	// BPF_ANY, BPF_NOEXIST or BPF_EXIST (UpdateFlags). Per-CPU maps write the
	// slot of cpu; a new element gets zeroes in the other CPUs' slots.
	UpdateElem(key, value unsafe.Pointer, flags uint64, cpu int) error
	// DeleteElem removes key.
	DeleteElem(key unsafe.Pointer) error

	// Lookup copies the value stored under key into valueOut.
	Lookup(key, valueOut any) error
	// LookupAndDelete copies the value into valueOut and removes it
	// (for queues and stacks: pops, with a nil key).
	LookupAndDelete(key, valueOut any) error
	// Update stores value under key.
	Update(key, value any, flags UpdateFlags) error
	// Delete removes key.
	Delete(key any) error
	// NextKey stores the key following key into nextKeyOut; a nil key asks
	// for the first key. It returns ErrKeyNotExist after the last key. The
	// order is the kernel's for the map type.
	NextKey(key, nextKeyOut any) error
	// Iterate returns an iterator over the map's keys and values.
	Iterate() *Iterator
	// Freeze makes the map read-only for the Go side (BPF_MAP_FREEZE);
	// programs can still write unless the map has BPF_F_RDONLY_PROG.
	Freeze() error
	// Close releases the map's Go-side resources (it wakes ring buffer
	// readers); later Go-side calls fail with ErrClosed. Memory a program
	// holds stays valid.
	Close() error
}

// QueueMap is the program-side API of queue and stack maps.
type QueueMap interface {
	Map
	// PushElem adds ValueSize bytes from value. With BPF_EXIST a full map
	// drops its oldest element to make room; otherwise it fails with
	// ErrMapFull.
	PushElem(value unsafe.Pointer, flags uint64) error
	// PopElem copies the next element into value and removes it; ErrEmpty
	// (matching ErrKeyNotExist and ENOENT) when there is none.
	PopElem(value unsafe.Pointer) error
	// PeekElem copies the next element into value without removing it.
	PeekElem(value unsafe.Pointer) error
}

// MemoryMap is a map whose values live in one contiguous block: array maps.
// Element i lives at Memory()[i*stride:], stride = ValueSize rounded up to 8.
type MemoryMap interface {
	Map
	Memory() []byte
}

// ProgArrayMap is a BPF_MAP_TYPE_PROG_ARRAY: a table of programs for tail
// calls. Programs are stored as opaque values (a higher package defines them).
type ProgArrayMap interface {
	Map
	// SetProgram stores p at index; a nil p clears the slot.
	SetProgram(index uint32, p any) error
	// Program returns the program at index, or nil. Lock-free.
	Program(index uint32) any
}

// goOps is the byte-level Go-side implementation of a map type; base turns
// Go values into bytes and calls it. Value buffers use the syscall layout:
// for per-CPU maps, PossibleCPUs() slots of ValueSize rounded up to 8 bytes.
type goOps interface {
	goLookup(key, valueOut []byte) error
	goLookupAndDelete(key, valueOut []byte) error
	goUpdate(key, value []byte, flags uint64) error
	goDelete(key []byte) error
	// goNextKey writes the key after key (nil: the first key) to next.
	goNextKey(key, next []byte) error
	// iterKeys appends keys, starting at cursor, to dst; it returns the
	// cursor to continue from and whether iteration is complete.
	iterKeys(cursor uint64, dst []byte) (keys []byte, next uint64, done bool, err error)
}

// base holds what all maps share: the spec, accessors and the Go-side API.
type base struct {
	spec      Spec
	ncpu      int     // value slots per element: 1, or PossibleCPUs() for per-CPU types
	valStride uintptr // ValueSize rounded up to 8
	errs      *errSet
	ops       goOps
	frozen    atomic.Bool
	closed    atomic.Bool
}

func (b *base) init(spec *Spec, ops goOps, ncpu int) {
	b.spec = *spec
	b.spec.InnerMap = nil
	b.ncpu = 1
	if spec.Type.HasPerCPUValue() {
		b.ncpu = ncpu
	}
	b.valStride = round8(uintptr(spec.ValueSize))
	b.errs = newErrSet(spec.Name)
	b.ops = ops
}

func (b *base) Name() string        { return b.spec.Name }
func (b *base) Type() Type          { return b.spec.Type }
func (b *base) KeySize() uint32     { return b.spec.KeySize }
func (b *base) ValueSize() uint32   { return b.spec.ValueSize }
func (b *base) MaxEntries() uint32  { return b.spec.MaxEntries }
func (b *base) Flags() uint32       { return b.spec.Flags }
func (b *base) ReadOnlyProg() bool  { return b.spec.Flags&FlagRdOnlyProg != 0 }
func (b *base) WriteOnlyProg() bool { return b.spec.Flags&FlagWrOnlyProg != 0 }
func (b *base) Spec() *Spec         { s := b.spec; return &s }

func (b *base) String() string {
	return fmt.Sprintf("%s(%s)#key=%d,value=%d,max=%d", b.spec.Type, b.spec.Name,
		b.spec.KeySize, b.spec.ValueSize, b.spec.MaxEntries)
}

// sysValueSize is the size of a Go-side value buffer.
func (b *base) sysValueSize() int { return b.ncpu * int(b.valStride) }

func (b *base) Freeze() error {
	b.frozen.Store(true)
	return nil
}

func (b *base) Close() error {
	b.closed.Store(true)
	return nil
}

// checkRead and checkWrite apply BPF_F_RDONLY, BPF_F_WRONLY, Freeze and Close
// to the Go side.
func (b *base) checkRead(op string) error {
	if b.closed.Load() {
		return fmt.Errorf("map %q: %s: %w", b.spec.Name, op, ErrClosed)
	}
	if _, ok := b.ops.(notSupported); ok {
		return b.wrapf(ErrNotSupported, "%s", op)
	}
	if b.spec.Flags&FlagWrOnly != 0 {
		return b.wrapf(ErrPermission, "%s: map is write-only (BPF_F_WRONLY)", op)
	}
	return nil
}

func (b *base) checkWrite(op string) error {
	if b.closed.Load() {
		return fmt.Errorf("map %q: %s: %w", b.spec.Name, op, ErrClosed)
	}
	if _, ok := b.ops.(notSupported); ok {
		return b.wrapf(ErrNotSupported, "%s", op)
	}
	if b.spec.Flags&FlagRdOnly != 0 {
		return b.wrapf(ErrPermission, "%s: map is read-only (BPF_F_RDONLY)", op)
	}
	if b.frozen.Load() {
		return b.wrapf(ErrPermission, "%s: map is frozen", op)
	}
	return nil
}

func (b *base) Lookup(key, valueOut any) error {
	if err := b.checkRead("lookup"); err != nil {
		return err
	}
	kb, err := b.marshalKey(key, "lookup")
	if err != nil {
		return err
	}
	vb := make([]byte, b.sysValueSize())
	if err := b.ops.goLookup(kb, vb); err != nil {
		return b.wrapf(err, "lookup")
	}
	return b.unmarshalValue(vb, valueOut, "lookup")
}

func (b *base) LookupAndDelete(key, valueOut any) error {
	if err := b.checkRead("lookup and delete"); err != nil {
		return err
	}
	if err := b.checkWrite("lookup and delete"); err != nil {
		return err
	}
	kb, err := b.marshalKey(key, "lookup and delete")
	if err != nil {
		return err
	}
	vb := make([]byte, b.sysValueSize())
	if err := b.ops.goLookupAndDelete(kb, vb); err != nil {
		return b.wrapf(err, "lookup and delete")
	}
	return b.unmarshalValue(vb, valueOut, "lookup and delete")
}

func (b *base) Update(key, value any, flags UpdateFlags) error {
	if err := b.checkWrite("update"); err != nil {
		return err
	}
	kb, err := b.marshalKey(key, "update")
	if err != nil {
		return err
	}
	vb, err := b.marshalValue(value, "update")
	if err != nil {
		return err
	}
	if err := b.ops.goUpdate(kb, vb, uint64(flags)); err != nil {
		return b.wrapf(err, "update")
	}
	return nil
}

func (b *base) Delete(key any) error {
	if err := b.checkWrite("delete"); err != nil {
		return err
	}
	kb, err := b.marshalKey(key, "delete")
	if err != nil {
		return err
	}
	if err := b.ops.goDelete(kb); err != nil {
		return b.wrapf(err, "delete")
	}
	return nil
}

func (b *base) NextKey(key, nextKeyOut any) error {
	if err := b.checkRead("next key"); err != nil {
		return err
	}
	var kb []byte
	if key != nil {
		var err error
		if kb, err = b.marshalKey(key, "next key"); err != nil {
			return err
		}
	}
	next := make([]byte, b.spec.KeySize)
	if err := b.ops.goNextKey(kb, next); err != nil {
		return b.wrapf(err, "next key")
	}
	return b.unmarshalKey(next, nextKeyOut, "next key")
}

func (b *base) Iterate() *Iterator {
	it := &Iterator{b: b}
	if err := b.checkRead("iterate"); err != nil {
		it.err = err
	}
	return it
}

// notSupported implements goOps for map types without a Go-side key/value
// interface (ring buffers).
type notSupported struct{ errs *errSet }

func (n notSupported) goLookup(_, _ []byte) error          { return n.errs.notSupp }
func (n notSupported) goLookupAndDelete(_, _ []byte) error { return n.errs.notSupp }
func (n notSupported) goUpdate(_, _ []byte, _ uint64) error {
	return n.errs.notSupp
}
func (n notSupported) goDelete(_ []byte) error     { return n.errs.notSupp }
func (n notSupported) goNextKey(_, _ []byte) error { return n.errs.notSupp }
func (n notSupported) iterKeys(uint64, []byte) ([]byte, uint64, bool, error) {
	return nil, 0, true, n.errs.notSupp
}

// New creates a map. The spec is validated like Linux's BPF_MAP_CREATE;
// errors name the map and wrap ErrInvalid, ErrTooBig, ErrNotSupported ...
func New(spec *Spec) (Map, error) {
	return newMap(spec, PossibleCPUs())
}

func newMap(spec *Spec, ncpu int) (Map, error) {
	if err := validate(spec); err != nil {
		return nil, err
	}
	switch spec.Type {
	case Array:
		return newArray(spec, nil)
	case PerCPUArray:
		return newPerCPUArray(spec, ncpu), nil
	case Hash, PerCPUHash, LRUHash, LRUCPUHash:
		return newHash(spec, ncpu)
	case ProgramArray:
		return newProgArray(spec), nil
	case Queue, Stack:
		return newQueue(spec), nil
	case RingBuf:
		return newRingBuf(spec)
	case LPMTrie:
		return newLPMTrie(spec), nil
	}
	return nil, fmt.Errorf("map %q: type %s: %w", spec.Name, spec.Type, ErrNotSupported)
}
