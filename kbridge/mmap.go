package kbridge

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/maps"
)

// Array is a kernel BPF_MAP_TYPE_ARRAY created with BPF_F_MMAPABLE, mapped
// into the process: VM programs and Go code read and write the kernel's
// memory directly, with no syscall per access. Element i lives at
// Memory()[i*round_up(ValueSize, 8):], the kernel's own layout, so atomic
// instructions from VM programs and from kernel programs act on the same
// words.
//
// Array is also a maps.MemoryMap and a vm.DirectMemory: helpers hand out
// pointers into the mapping, and lddw BPF_PSEUDO_MAP_VALUE addresses it.
type Array struct {
	maps.Map // package maps' array on the mapping
	km       *ebpf.Map
	mapping  *mapping
	readOnly bool
	once     sync.Once
	closeErr error
}

var _ maps.MemoryMap = (*Array)(nil)

// mapping is an mmapped range. Its address never changes while the Array is
// reachable: Close replaces the kernel pages by private anonymous ones at
// the same address, and the range is unmapped only when the Array is
// garbage (runtime.AddCleanup), that is when no Program holds it any more.
type mapping struct {
	addr unsafe.Pointer
	size uintptr
}

func newArray(m *ebpf.Map, name string) (*Array, error) {
	spec := specOf(m, name)
	stride := (uintptr(spec.ValueSize) + 7) &^ 7
	size := stride * uintptr(spec.MaxEntries)
	page := uintptr(os.Getpagesize())
	size = (size + page - 1) &^ (page - 1)
	if size == 0 {
		return nil, fmt.Errorf("map %q: empty array: %w", name, maps.ErrInvalid)
	}

	// The kernel refuses a writable mapping of a frozen map (EPERM) or of
	// one created with BPF_F_RDONLY_PROG (EACCES); map those read-only.
	readOnly := false
	addr, err := unix.MmapPtr(m.FD(), 0, nil, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		readOnly = true
		addr, err = unix.MmapPtr(m.FD(), 0, nil, size, unix.PROT_READ, unix.MAP_SHARED)
	}
	if err != nil {
		return nil, fmt.Errorf("map %q: mmap %d bytes: %w", name, size, err)
	}
	mp := &mapping{addr: addr, size: size}
	mem := unsafe.Slice((*byte)(addr), size)

	if readOnly {
		// Programs must not write (the pages would fault): report
		// BPF_F_RDONLY_PROG so helpers hand values out read-only.
		spec.Flags |= maps.FlagRdOnlyProg
	}
	// maps validates the flags of arrays; BPF_F_MMAPABLE is one of them.
	inner, err := maps.NewArrayOn(spec, mem)
	if err != nil {
		unix.MunmapPtr(addr, size)
		return nil, err
	}
	if readOnly {
		inner.Freeze() // the Go side must not write either
	}
	a := &Array{Map: inner, km: m, mapping: mp, readOnly: readOnly}
	runtime.AddCleanup(a, func(mp *mapping) { unix.MunmapPtr(mp.addr, mp.size) }, mp)
	return a, nil
}

// Kernel returns the underlying cilium/ebpf map.
func (a *Array) Kernel() *ebpf.Map { return a.km }

// Memory returns the values' memory: MaxEntries elements at a stride of
// ValueSize rounded up to 8.
func (a *Array) Memory() []byte { return a.Map.(maps.MemoryMap).Memory() }

// MappedReadOnly reports whether the kernel only allowed a read-only mapping
// (frozen map or BPF_F_RDONLY_PROG): programs and Go code may then only read.
func (a *Array) MappedReadOnly() bool { return a.readOnly }

// Close detaches the Array from the kernel map: the mapping's pages are
// replaced by private zero pages at the same address, and the map's file
// descriptor is closed, so the kernel map is freed once nothing else
// references it. A program that still holds the Array keeps running on the
// detached pages (its writes go nowhere) instead of faulting; the address
// range itself is released when the Array becomes unreachable. Later
// Go-side calls fail with maps.ErrClosed.
func (a *Array) Close() error {
	a.once.Do(func() {
		a.Map.Close()
		_, err := unix.MmapPtr(-1, 0, a.mapping.addr, a.mapping.size,
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
		if err != nil {
			a.closeErr = fmt.Errorf("map %q: detach mapping: %w", a.Name(), err)
		}
		if err := a.km.Close(); err != nil && a.closeErr == nil {
			a.closeErr = fmt.Errorf("map %q: close: %w", a.Name(), err)
		}
	})
	return a.closeErr
}
