package elf

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// mapTable holds a collection's maps. table is the one map table every
// program of the collection indexes (lddw imm = index), so that programs
// share map pointers, as tail calls need.
type mapTable struct {
	byName map[string]maps.Map
	index  map[string]int
	table  []vm.Map
	// failed holds the maps that could not be created in userspace (a type
	// with no userspace implementation, say). They are an error only for a
	// program loaded into the VM that uses them: kernel programs may.
	failed map[string]error
	// replaced holds the maps given by Options.MapReplacements (nil
	// values included): the collection does not own them.
	replaced map[string]bool
}

// userspaceTypes are the map types package maps implements.
var userspaceTypes = map[ebpf.MapType]bool{
	ebpf.Hash: true, ebpf.Array: true, ebpf.ProgramArray: true, ebpf.PerCPUHash: true,
	ebpf.PerCPUArray: true, ebpf.LRUHash: true, ebpf.LRUCPUHash: true, ebpf.LPMTrie: true,
	ebpf.Queue: true, ebpf.Stack: true, ebpf.RingBuf: true,
}

// newMapTable creates the maps of spec, in name order, using the
// replacements given instead of creating those maps.
func newMapTable(spec *ebpf.CollectionSpec, replacements map[string]maps.Map) (*mapTable, error) {
	mt := &mapTable{
		byName:   make(map[string]maps.Map, len(spec.Maps)),
		index:    make(map[string]int, len(spec.Maps)),
		failed:   make(map[string]error),
		replaced: make(map[string]bool, len(replacements)),
	}
	for name := range replacements {
		if _, ok := spec.Maps[name]; !ok {
			return nil, fmt.Errorf("%w: replacement for map %q, which the object does not declare", ErrMissingSymbol, name)
		}
	}
	names := make([]string, 0, len(spec.Maps))
	for name := range spec.Maps {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if r, ok := replacements[name]; ok {
			mt.replaced[name] = true
			if r == nil {
				mt.failed[name] = fmt.Errorf("map %s: %w", name, ErrKernelOnlyMap)
				continue
			}
			if err := checkReplacement(spec.Maps[name], r); err != nil {
				mt.close()
				return nil, fmt.Errorf("map %s: %w", name, err)
			}
			mt.index[name] = len(mt.table)
			mt.table = append(mt.table, r)
			mt.byName[name] = r
			continue
		}
		m, err := createMap(name, spec.Maps[name])
		if err != nil {
			mt.failed[name] = fmt.Errorf("map %s: %w", name, err)
			continue
		}
		mt.index[name] = len(mt.table)
		mt.table = append(mt.table, m)
		mt.byName[name] = m
	}
	return mt, nil
}

// checkReplacement compares a replacement map with the object's definition.
// Flags may differ (a kernel bridge adds BPF_F_MMAPABLE, say).
func checkReplacement(ms *ebpf.MapSpec, m maps.Map) error {
	switch {
	case maps.Type(ms.Type) != m.Type():
		return fmt.Errorf("%w: type %s, the object declares %s", ErrMapReplacement, m.Type(), maps.Type(ms.Type))
	case ms.KeySize != m.KeySize():
		return fmt.Errorf("%w: key size %d, the object declares %d", ErrMapReplacement, m.KeySize(), ms.KeySize)
	case ms.ValueSize != m.ValueSize():
		return fmt.Errorf("%w: value size %d, the object declares %d", ErrMapReplacement, m.ValueSize(), ms.ValueSize)
	case ms.MaxEntries != 0 && ms.MaxEntries != m.MaxEntries():
		return fmt.Errorf("%w: %d entries, the object declares %d", ErrMapReplacement, m.MaxEntries(), ms.MaxEntries)
	}
	return nil
}

// resolve is the mapResolver of programs loaded into the VM.
func (mt *mapTable) resolve(name string) (int, error) {
	if i, ok := mt.index[name]; ok {
		return i, nil
	}
	if err, ok := mt.failed[name]; ok {
		return 0, err
	}
	return 0, fmt.Errorf("%w: map %q", ErrMissingSymbol, name)
}

func (mt *mapTable) close() error {
	var errs []error
	for name, m := range mt.byName {
		if mt.replaced[name] {
			continue
		}
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

// mapSpec converts a cilium MapSpec. Data sections keep their section name
// (".rodata", ".bss", ...), as in cilium's CollectionSpec.
func mapSpec(name string, ms *ebpf.MapSpec) (*maps.Spec, error) {
	if ms.Extra != nil && ms.Extra.Size() > 0 {
		// Trailing fields of a legacy definition larger than libbpf's
		// bpf_map_def (iproute2's id, pinning, inner map ...).
		extra := make([]byte, ms.Extra.Size())
		n, _ := ms.Extra.ReadAt(extra, 0)
		if slices.ContainsFunc(extra[:n], func(b byte) bool { return b != 0 }) {
			return nil, fmt.Errorf("legacy definition has %d bytes of unsupported fields after map_flags", n)
		}
	}
	s := &maps.Spec{
		Name:       name,
		Type:       maps.Type(ms.Type),
		KeySize:    ms.KeySize,
		ValueSize:  ms.ValueSize,
		MaxEntries: ms.MaxEntries,
		Flags:      ms.Flags,
		Pinning:    uint32(ms.Pinning),
	}
	if ms.InnerMap != nil {
		inner, err := mapSpec(name+"_inner", ms.InnerMap)
		if err != nil {
			return nil, fmt.Errorf("inner map: %w", err)
		}
		s.InnerMap = inner
	}
	return s, nil
}

// createMap creates one map with its initial contents. Program arrays are
// filled later, once their programs exist.
func createMap(name string, ms *ebpf.MapSpec) (maps.Map, error) {
	if !userspaceTypes[ms.Type] {
		return nil, fmt.Errorf("%w: type %s", ErrUnsupportedMapType, ms.Type)
	}
	s, err := mapSpec(name, ms)
	if err != nil {
		return nil, err
	}
	m, err := maps.New(s)
	if err != nil {
		return nil, err
	}
	if isDataSection(name) {
		err = fillDataSection(m, ms)
	} else if ms.Type != ebpf.ProgramArray {
		err = fillContents(m, ms)
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// fillDataSection copies a data section's initial bytes into its array.
func fillDataSection(m maps.Map, ms *ebpf.MapSpec) error {
	mm, ok := m.(maps.MemoryMap)
	if !ok || ms.MaxEntries != 1 {
		return fmt.Errorf("data section is a %s with %d entries, want a one-element array", ms.Type, ms.MaxEntries)
	}
	for _, kv := range ms.Contents {
		data, ok := kv.Value.([]byte)
		if !ok {
			return fmt.Errorf("data section contents are %T, want []byte", kv.Value)
		}
		if len(data) > int(ms.ValueSize) {
			return fmt.Errorf("data section contents are %d bytes, the section %d", len(data), ms.ValueSize)
		}
		copy(mm.Memory(), data)
	}
	return nil
}

// fillContents stores a map's initial key/value pairs.
func fillContents(m maps.Map, ms *ebpf.MapSpec) error {
	for _, kv := range ms.Contents {
		if err := m.Update(kv.Key, kv.Value, maps.UpdateAny); err != nil {
			return fmt.Errorf("initial contents: %w", err)
		}
	}
	return nil
}
