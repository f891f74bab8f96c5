package elf

import (
	stdelf "debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/maps"
)

// An object file is untrusted input, and a few of its fields size what the
// loader allocates: cilium/ebpf allocates a zeroed buffer of a .bss
// section's sh_size before anything else looks at it (0xb0000008 bytes is
// 2.9 GB, and as much again while copying), and maps are allocated up
// front from their declared sizes, as in the kernel. Both are checked
// first: the section headers before cilium/ebpf parses the file, the maps
// before any is created.

const (
	// DefaultMaxMapMemory is the memory the maps of one collection may
	// take when Options.MaxMapMemory is 0: 1 GiB.
	DefaultMaxMapMemory = 1 << 30
	// NoMapMemoryLimit as Options.MaxMapMemory (any negative value does
	// the same) lifts the limit on the maps' memory. MaxGlobalData still
	// bounds the global data sections.
	NoMapMemoryLimit = -1
	// MaxGlobalData bounds the total size of an object's SHT_NOBITS
	// sections (.bss), which take no room in the file but are allocated
	// whole when it is parsed: 512 MiB, far above what the kernel accepts
	// (a global data section is the value of a one-element array, at most
	// KMALLOC_MAX_SIZE, 4 MiB on x86-64). A smaller Options.MaxMapMemory
	// lowers it.
	MaxGlobalData = 512 << 20
)

// mapMemoryLimit returns the limit opts sets on the maps' memory, or
// math.MaxUint64 for none.
func mapMemoryLimit(opts *Options) uint64 {
	switch {
	case opts == nil || opts.MaxMapMemory == 0:
		return DefaultMaxMapMemory
	case opts.MaxMapMemory < 0:
		return math.MaxUint64
	}
	return uint64(opts.MaxMapMemory)
}

// checkSections reads the section headers of the object with debug/elf
// and refuses, before cilium/ebpf allocates anything from them, a section
// with contents (not SHT_NOBITS) that does not lie inside the file (its
// bytes would be read or allocated from sizes the file does not back), and
// SHT_NOBITS sections whose total exceeds limit.
func checkSections(r io.ReaderAt, limit uint64) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: reading section headers: %v", ErrMalformed, v)
		}
	}()
	f, err := stdelf.NewFile(r)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// debug/elf says only "EOF": say what it means.
		return fmt.Errorf("%w: %w: it ends inside its ELF headers", ErrMalformed, ErrTruncated)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var nobits uint64
	var b [1]byte
	for _, s := range f.Sections {
		switch {
		case s.Type == stdelf.SHT_NOBITS:
			nobits = addSat(nobits, s.Size)
			if n := min(limit, MaxGlobalData); nobits > n {
				return fmt.Errorf("section %s (SHT_NOBITS) is %d bytes: global data over %d bytes: %w", s.Name, s.Size, n, ErrMapTooLarge)
			}
		case s.Type == stdelf.SHT_NULL || s.Size == 0:
		default:
			end, carry := bits.Add64(s.Offset, s.Size, 0)
			// A read of its last byte tells whether the file holds it,
			// whatever the reader (a file, bytes, a section of either).
			if carry != 0 || end > math.MaxInt64 {
				return fmt.Errorf("%w: section %s: offset %#x + size %#x overflows", ErrMalformed, s.Name, s.Offset, s.Size)
			}
			if _, err := r.ReadAt(b[:], int64(end-1)); err != nil {
				if errors.Is(err, io.EOF) {
					return fmt.Errorf("%w: %w: section %s (offset %#x + size %#x) is past its end", ErrMalformed, ErrTruncated, s.Name, s.Offset, s.Size)
				}
				return fmt.Errorf("section %s: %w", s.Name, err)
			}
		}
	}
	return nil
}

// addSat returns a+b, or math.MaxUint64 if that overflows.
func addSat(a, b uint64) uint64 {
	if s, carry := bits.Add64(a, b, 0); carry == 0 {
		return s
	}
	return math.MaxUint64
}

// mapMemory returns the bytes a map of ms takes, as declared (the
// implementation's overhead aside), saturating at math.MaxUint64.
func mapMemory(ms *ebpf.MapSpec) uint64 {
	key, value, entries := uint64(ms.KeySize), uint64(ms.ValueSize), uint64(ms.MaxEntries)
	mul := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		if hi != 0 {
			return math.MaxUint64
		}
		return lo
	}
	switch maps.Type(ms.Type) {
	case maps.RingBuf:
		return entries // the buffer's size in bytes
	case maps.Array, maps.ProgramArray, maps.Queue, maps.Stack:
		return mul(value, entries)
	case maps.PerCPUArray:
		return mul(mul(value, uint64(maps.PossibleCPUs())), entries)
	case maps.PerCPUHash, maps.LRUCPUHash:
		return mul(addSat(key, mul(value, uint64(maps.PossibleCPUs()))), entries)
	}
	return mul(addSat(key, value), entries) // hashes, LPM tries
}

// checkMapMemory refuses spec when the maps NewCollection would create
// (those of a userspace type, not replaced) take more than limit bytes
// together, naming the map that crosses it.
func checkMapMemory(spec *ebpf.CollectionSpec, replacements map[string]maps.Map, limit uint64) error {
	if limit == math.MaxUint64 {
		return nil
	}
	names := make([]string, 0, len(spec.Maps))
	for name, ms := range spec.Maps {
		if _, ok := replacements[name]; !ok && userspaceTypes[ms.Type] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var total uint64
	for _, name := range names {
		ms := spec.Maps[name]
		size := mapMemory(ms)
		total = addSat(total, size)
		if total > limit {
			return fmt.Errorf("map %s (%s, key %d, value %d, %d entries) takes %d bytes: the maps take %d bytes, over %d (Options.MaxMapMemory): %w",
				name, ms.Type, ms.KeySize, ms.ValueSize, ms.MaxEntries, size, total, limit, ErrMapTooLarge)
		}
	}
	return nil
}
