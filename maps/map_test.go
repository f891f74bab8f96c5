package maps

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/internal/errno"
)

func mustNew(t testing.TB, spec *Spec) Map {
	t.Helper()
	m, err := New(spec)
	if err != nil {
		t.Fatalf("New(%+v): %v", spec, err)
	}
	return m
}

func TestNewValidation(t *testing.T) {
	page := uint32(hostPageSize)
	tests := []struct {
		name string
		spec Spec
		want error // nil: valid
	}{
		{"array ok", Spec{Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 4}, nil},
		{"array key 8", Spec{Type: Array, KeySize: 8, ValueSize: 8, MaxEntries: 4}, ErrInvalid},
		{"array value 0", Spec{Type: Array, KeySize: 4, ValueSize: 0, MaxEntries: 4}, ErrInvalid},
		{"array max 0", Spec{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 0}, ErrInvalid},
		{"array mmapable", Spec{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagMmapable}, nil},
		{"array rdonly prog", Spec{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagRdOnlyProg}, nil},
		{"array rdonly+wronly prog", Spec{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagRdOnlyProg | FlagWrOnlyProg}, ErrInvalid},
		{"array rdonly+wronly", Spec{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagRdOnly | FlagWrOnly}, ErrInvalid},
		{"array no prealloc", Spec{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagNoPrealloc}, ErrInvalid},
		{"array too large", Spec{Type: Array, KeySize: 4, ValueSize: 1 << 20, MaxEntries: 1 << 14}, ErrNoMemory},
		{"array value too big", Spec{Type: Array, KeySize: 4, ValueSize: kmallocMaxSize + 1, MaxEntries: 1}, ErrTooBig},
		{"percpu array mmapable", Spec{Type: PerCPUArray, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagMmapable}, ErrInvalid},
		{"percpu array value too big", Spec{Type: PerCPUArray, KeySize: 4, ValueSize: pcpuMinUnitSize + 1, MaxEntries: 1}, ErrTooBig},
		{"prog array ok", Spec{Type: ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 8}, nil},
		{"prog array value 8", Spec{Type: ProgramArray, KeySize: 4, ValueSize: 8, MaxEntries: 8}, ErrInvalid},
		{"prog array rdonly prog", Spec{Type: ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 8, Flags: FlagRdOnlyProg}, ErrInvalid},
		{"hash ok", Spec{Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 8}, nil},
		{"hash no prealloc", Spec{Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 8, Flags: FlagNoPrealloc}, nil},
		{"hash zero seed", Spec{Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 8, Flags: FlagZeroSeed}, nil},
		{"hash key 0", Spec{Type: Hash, KeySize: 0, ValueSize: 8, MaxEntries: 8}, ErrInvalid},
		{"hash value 0", Spec{Type: Hash, KeySize: 4, ValueSize: 0, MaxEntries: 8}, ErrInvalid},
		{"hash max 0", Spec{Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 0}, ErrInvalid},
		{"hash key too big", Spec{Type: Hash, KeySize: 513, ValueSize: 4, MaxEntries: 1}, ErrTooBig},
		{"hash no common lru", Spec{Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagNoCommonLRU}, ErrInvalid},
		{"hash mmapable", Spec{Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagMmapable}, ErrInvalid},
		{"percpu hash value too big", Spec{Type: PerCPUHash, KeySize: 4, ValueSize: pcpuMinUnitSize + 1, MaxEntries: 1}, ErrTooBig},
		{"lru ok", Spec{Type: LRUHash, KeySize: 4, ValueSize: 4, MaxEntries: 4, Flags: FlagNoCommonLRU}, nil},
		{"lru no prealloc", Spec{Type: LRUHash, KeySize: 4, ValueSize: 4, MaxEntries: 4, Flags: FlagNoPrealloc}, ErrNotSupported},
		{"lru percpu ok", Spec{Type: LRUCPUHash, KeySize: 4, ValueSize: 4, MaxEntries: 4}, nil},
		{"lpm ok", Spec{Type: LPMTrie, KeySize: 8, ValueSize: 4, MaxEntries: 4, Flags: FlagNoPrealloc}, nil},
		{"lpm prealloc", Spec{Type: LPMTrie, KeySize: 8, ValueSize: 4, MaxEntries: 4}, ErrInvalid},
		{"lpm key 4", Spec{Type: LPMTrie, KeySize: 4, ValueSize: 4, MaxEntries: 4, Flags: FlagNoPrealloc}, ErrInvalid},
		{"lpm key 261", Spec{Type: LPMTrie, KeySize: 261, ValueSize: 4, MaxEntries: 4, Flags: FlagNoPrealloc}, ErrInvalid},
		{"lpm value 0", Spec{Type: LPMTrie, KeySize: 8, ValueSize: 0, MaxEntries: 4, Flags: FlagNoPrealloc}, ErrInvalid},
		{"queue ok", Spec{Type: Queue, ValueSize: 4, MaxEntries: 4}, nil},
		{"queue key 4", Spec{Type: Queue, KeySize: 4, ValueSize: 4, MaxEntries: 4}, ErrInvalid},
		{"stack value 0", Spec{Type: Stack, ValueSize: 0, MaxEntries: 4}, ErrInvalid},
		{"stack max 0", Spec{Type: Stack, ValueSize: 4, MaxEntries: 0}, ErrInvalid},
		{"queue no prealloc", Spec{Type: Queue, ValueSize: 4, MaxEntries: 4, Flags: FlagNoPrealloc}, ErrInvalid},
		{"ringbuf ok", Spec{Type: RingBuf, MaxEntries: page}, nil},
		{"ringbuf 4 pages", Spec{Type: RingBuf, MaxEntries: 4 * page}, nil},
		{"ringbuf 3 pages", Spec{Type: RingBuf, MaxEntries: 3 * page}, ErrInvalid},
		{"ringbuf half page", Spec{Type: RingBuf, MaxEntries: page / 2}, ErrInvalid},
		{"ringbuf key", Spec{Type: RingBuf, KeySize: 4, MaxEntries: page}, ErrInvalid},
		{"ringbuf value", Spec{Type: RingBuf, ValueSize: 4, MaxEntries: page}, ErrInvalid},
		{"ringbuf rdonly prog", Spec{Type: RingBuf, MaxEntries: page, Flags: FlagRdOnlyProg}, ErrInvalid},
		{"unsupported type", Spec{Type: PerfEventArray, KeySize: 4, ValueSize: 4, MaxEntries: 1}, ErrNotSupported},
		{"inner map", Spec{Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1, InnerMap: &Spec{}}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "m"
			m, err := New(&tt.spec)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if m.Type() != tt.spec.Type || m.KeySize() != tt.spec.KeySize || m.ValueSize() != tt.spec.ValueSize ||
					m.MaxEntries() != tt.spec.MaxEntries || m.Flags() != tt.spec.Flags || m.Name() != "m" {
					t.Errorf("accessors disagree with spec: %s", m)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("New: got %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), `map "m"`) {
				t.Errorf("error %q does not name the map", err)
			}
		})
	}
	if _, err := New(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("New(nil): %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := New(&Spec{Name: "counts", Type: Hash, KeySize: 4, ValueSize: 0, MaxEntries: 1})
	if got, want := err.Error(), `map "counts": value size 0: invalid argument`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestErrno(t *testing.T) {
	m := mustNew(t, &Spec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	k, v := uint32(1), uint32(2)
	kp, vp := unsafe.Pointer(&k), unsafe.Pointer(&v)

	errNotExist := m.DeleteElem(kp)
	if err := m.UpdateElem(kp, vp, 0, 0); err != nil {
		t.Fatal(err)
	}
	errExist := m.UpdateElem(kp, vp, uint64(UpdateNoExist), 0)
	k2 := uint32(2)
	errFull := m.UpdateElem(unsafe.Pointer(&k2), vp, 0, 0)
	errFlags := m.UpdateElem(kp, vp, 8, 0)
	errLock := m.UpdateElem(kp, vp, uint64(UpdateLock), 0)

	tests := []struct {
		name     string
		err      error
		sentinel error
		errno    unix.Errno
	}{
		{"missing key", errNotExist, ErrKeyNotExist, unix.ENOENT},
		{"noexist on existing", errExist, ErrKeyExist, unix.EEXIST},
		{"full", errFull, ErrMapFull, unix.E2BIG},
		{"bad flags", errFlags, ErrInvalid, unix.EINVAL},
		{"lock flag", errLock, ErrInvalid, unix.EINVAL},
		{"empty", ErrEmpty, ErrKeyNotExist, unix.ENOENT},
		{"ringbuf full", ErrRingBufFull, ErrRingBufFull, unix.EAGAIN},
		{"permission", ErrPermission, ErrPermission, unix.EPERM},
		{"no memory", ErrNoMemory, ErrNoMemory, unix.ENOMEM},
		{"not supported", ErrNotSupported, ErrNotSupported, errno.ENOTSUPP},
		{"trie full", errTrieFull, ErrMapFull, unix.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.sentinel) {
				t.Errorf("%v is not %v", tt.err, tt.sentinel)
			}
			if !errors.Is(tt.err, tt.errno) {
				t.Errorf("%v is not errno %v", tt.err, tt.errno)
			}
			if got := Errno(tt.err); got != -int64(tt.errno) {
				t.Errorf("Errno(%v) = %d, want %d", tt.err, got, -int64(tt.errno))
			}
			wrapped := m.(*hashMap).wrapf(tt.err, "op")
			if got := Errno(wrapped); got != -int64(tt.errno) {
				t.Errorf("Errno(wrapped) = %d", got)
			}
		})
	}
	if !strings.Contains(errNotExist.Error(), `map "h"`) {
		t.Errorf("program-side error %q does not name the map", errNotExist)
	}
	if Errno(nil) != 0 {
		t.Error("Errno(nil) != 0")
	}
	if Errno(errors.New("x")) != -int64(unix.EINVAL) {
		t.Error("Errno(other) != -EINVAL")
	}
}

func TestAccessFlags(t *testing.T) {
	ro := mustNew(t, &Spec{Name: "ro", Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagRdOnlyProg})
	wo := mustNew(t, &Spec{Name: "wo", Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagWrOnlyProg})
	if !ro.ReadOnlyProg() || ro.WriteOnlyProg() || wo.ReadOnlyProg() || !wo.WriteOnlyProg() {
		t.Error("ReadOnlyProg/WriteOnlyProg wrong")
	}
	// Program-side flags do not restrict the Go side.
	if err := ro.Update(uint32(0), uint32(1), UpdateAny); err != nil {
		t.Error(err)
	}
	sysRO := mustNew(t, &Spec{Name: "sro", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagRdOnly})
	if err := sysRO.Update(uint32(0), uint32(1), UpdateAny); !errors.Is(err, ErrPermission) {
		t.Errorf("update of BPF_F_RDONLY map: %v", err)
	}
	if err := sysRO.Delete(uint32(0)); !errors.Is(err, ErrPermission) {
		t.Errorf("delete of BPF_F_RDONLY map: %v", err)
	}
	sysWO := mustNew(t, &Spec{Name: "swo", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: FlagWrOnly})
	if err := sysWO.Update(uint32(0), uint32(1), UpdateAny); err != nil {
		t.Error(err)
	}
	var v uint32
	if err := sysWO.Lookup(uint32(0), &v); !errors.Is(err, ErrPermission) {
		t.Errorf("lookup of BPF_F_WRONLY map: %v", err)
	}
	if it := sysWO.Iterate(); it.Next(nil, nil) || !errors.Is(it.Err(), ErrPermission) {
		t.Errorf("iterate of BPF_F_WRONLY map: %v", it.Err())
	}
	// The program side ignores BPF_F_RDONLY.
	k, val := uint32(0), uint32(5)
	if err := sysRO.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&val), 0, 0); err != nil {
		t.Error(err)
	}
}

func TestFreezeAndClose(t *testing.T) {
	m := mustNew(t, &Spec{Name: "f", Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 2})
	if err := m.Update(uint32(0), uint32(7), UpdateAny); err != nil {
		t.Fatal(err)
	}
	if err := m.Freeze(); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(uint32(0), uint32(8), UpdateAny); !errors.Is(err, ErrPermission) {
		t.Errorf("update after freeze: %v", err)
	}
	var v uint32
	if err := m.Lookup(uint32(0), &v); err != nil || v != 7 {
		t.Errorf("lookup after freeze: %v %d", err, v)
	}
	k, nv := uint32(0), uint32(9)
	if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&nv), 0, 0); err != nil {
		t.Errorf("program update after freeze: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Lookup(uint32(0), &v); !errors.Is(err, ErrClosed) {
		t.Errorf("lookup after close: %v", err)
	}
	if p := m.LookupElem(unsafe.Pointer(&k), 0); p == nil || *(*uint32)(p) != 9 {
		t.Error("program-side lookup after close failed")
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0\n", 1, true}, {"0-1\n", 2, true}, {"0-63", 64, true}, {"0,2-5", 6, true},
		{"", 0, false}, {"a-b", 0, false}, {"3-1", 0, false},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseCPUList(%q) = %d, %v", tt.in, got, err)
		}
	}
	if PossibleCPUs() < 1 {
		t.Error("PossibleCPUs < 1")
	}
}

func TestSpecCopy(t *testing.T) {
	s := &Spec{Name: "x", InnerMap: &Spec{Name: "in"}}
	c := s.Copy()
	c.InnerMap.Name = "changed"
	if s.InnerMap.Name != "in" {
		t.Error("Copy is shallow")
	}
	m := mustNew(t, &Spec{Name: "s", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	sp := m.Spec()
	sp.Name = "other"
	if m.Name() != "s" {
		t.Error("Spec() exposes internal state")
	}
	if Hash.String() != "Hash" || Type(999).String() != "Type(999)" {
		t.Error("Type.String")
	}
}

func TestLoadPartial(t *testing.T) {
	src := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for n := uintptr(1); n <= 8; n++ {
		var want [8]byte
		copy(want[:], src[1:1+n])
		if got := loadPartial(unsafe.Pointer(&src[1]), n); got != *(*uint64)(unsafe.Pointer(&want)) {
			t.Errorf("loadPartial(%d) = %#x", n, got)
		}
	}
}
