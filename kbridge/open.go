package kbridge

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/maps"
)

// Map is a kernel map seen as a map of package maps: VM programs reach it
// through the standard map helpers, Go code through the usual Go-side API.
// It is either an *Array (a BPF_F_MMAPABLE array, mmapped) or a
// *SyscallMap (every access is a bpf() syscall, values are copies).
type Map interface {
	maps.Map
	// Kernel returns the underlying cilium/ebpf map. It stays owned by the
	// Map: do not close it.
	Kernel() *ebpf.Map
}

// Open wraps m, taking ownership of it: closing the returned Map closes m.
// Arrays created with BPF_F_MMAPABLE are mmapped (*Array); other key/value
// map types go through the bpf() syscall (*SyscallMap). Ring buffers are
// not maps of this kind: use NewRingReader and NewUserRingBuf.
func Open(m *ebpf.Map) (Map, error) {
	name := kernelName(m)
	switch m.Type() {
	case ebpf.Array:
		if m.Flags()&maps.FlagMmapable != 0 {
			return newArray(m, name)
		}
		return newSyscallMap(m, name)
	case ebpf.Hash, ebpf.LRUHash, ebpf.LPMTrie, ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUCPUHash:
		return newSyscallMap(m, name)
	}
	return nil, fmt.Errorf("map %q: type %s: %w", name, m.Type(), maps.ErrNotSupported)
}

// OpenPinned opens the map pinned at path in bpffs.
func OpenPinned(path string, opts *ebpf.LoadPinOptions) (Map, error) {
	m, err := ebpf.LoadPinnedMap(path, opts)
	if err != nil {
		return nil, fmt.Errorf("map pinned at %s: %w", path, err)
	}
	return openOwned(m)
}

// OpenID opens the kernel map with the given ID.
func OpenID(id ebpf.MapID) (Map, error) {
	m, err := ebpf.NewMapFromID(id)
	if err != nil {
		return nil, fmt.Errorf("map id %d: %w", id, err)
	}
	return openOwned(m)
}

// OpenFD opens the map behind fd, taking ownership of fd (as
// ebpf.NewMapFromFD does): closing the Map closes fd.
func OpenFD(fd int) (Map, error) {
	m, err := ebpf.NewMapFromFD(fd)
	if err != nil {
		return nil, fmt.Errorf("map fd %d: %w", fd, err)
	}
	return openOwned(m)
}

// FromCollection opens every key/value map of coll, by the collection's
// names. Each Map holds a clone of the collection's map (its own file
// descriptor), so closing the collection and closing the Maps are
// independent. Ring buffers and other types Open does not support are
// skipped.
func FromCollection(coll *ebpf.Collection) (map[string]Map, error) {
	out := make(map[string]Map, len(coll.Maps))
	for name, cm := range coll.Maps {
		switch cm.Type() {
		case ebpf.RingBuf, ebpf.UserRingbuf, ebpf.PerfEventArray, ebpf.ProgramArray,
			ebpf.ArrayOfMaps, ebpf.HashOfMaps:
			continue
		}
		c, err := cm.Clone()
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("map %q: clone: %w", name, err)
		}
		m, err := Open(c)
		if err != nil {
			c.Close()
			closeAll(out)
			return nil, err
		}
		out[name] = m
	}
	return out, nil
}

func closeAll(ms map[string]Map) {
	for _, m := range ms {
		m.Close()
	}
}

func openOwned(m *ebpf.Map) (Map, error) {
	km, err := Open(m)
	if err != nil {
		m.Close()
		return nil, err
	}
	return km, nil
}

// kernelName is the map's name in the kernel, or "id:N" when it has none.
func kernelName(m *ebpf.Map) string {
	info, err := m.Info()
	if err != nil {
		return fmt.Sprintf("fd:%d", m.FD())
	}
	if info.Name != "" {
		return info.Name
	}
	if id, ok := info.ID(); ok {
		return fmt.Sprintf("id:%d", id)
	}
	return fmt.Sprintf("fd:%d", m.FD())
}

// specOf describes m with the fields of package maps.
func specOf(m *ebpf.Map, name string) *maps.Spec {
	return &maps.Spec{
		Name:       name,
		Type:       maps.Type(m.Type()),
		KeySize:    m.KeySize(),
		ValueSize:  m.ValueSize(),
		MaxEntries: m.MaxEntries(),
		Flags:      m.Flags(),
	}
}
