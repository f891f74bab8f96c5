package elf_test

import (
	"bytes"
	stdelf "debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/maps"
)

// patchSectionSize returns a copy of the object at path whose section
// name claims size bytes. The section header table is found with
// debug/elf's section order and the ELF64 header's e_shoff and
// e_shentsize; sh_size is at offset 32 of an Elf64_Shdr.
func patchSectionSize(tb testing.TB, path, name string, size uint64) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := stdelf.NewFile(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	if f.Class != stdelf.ELFCLASS64 || f.ByteOrder != binary.LittleEndian {
		tb.Fatalf("%s: not a little-endian ELF64 object", path)
	}
	shoff := binary.LittleEndian.Uint64(data[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(data[0x3a:]))
	for i, s := range f.Sections {
		if s.Name == name {
			binary.LittleEndian.PutUint64(data[shoff+uint64(i)*shentsize+32:], size)
			return data
		}
	}
	tb.Fatalf("%s has no section %s", path, name)
	return nil
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeBSSRefused: a .bss whose sh_size claims 2.9 GB made cilium/ebpf
// allocate it (twice) before failing; the section headers are checked
// first, and the object is refused without allocating its claim.
func TestHugeBSSRefused(t *testing.T) {
	data := patchSectionSize(t, "testdata/loader.bpf.o", ".bss", 0xb0000008)
	for _, tc := range []struct {
		name string
		load func() error
	}{
		{"LoadReader", func() error { _, err := elf.LoadReader(bytes.NewReader(data), nil); return err }},
		{"LoadSpecFromReader", func() error { _, err := elf.LoadSpecFromReader(bytes.NewReader(data)); return err }},
		{"LoadReader without map limit", func() error {
			_, err := elf.LoadReader(bytes.NewReader(data), &elf.Options{MaxMapMemory: elf.NoMapMemoryLimit})
			return err
		}},
	} {
		var err error
		n := allocated(func() { err = tc.load() })
		if !errors.Is(err, elf.ErrMapTooLarge) || !strings.Contains(err.Error(), ".bss") {
			t.Errorf("%s: err = %v, want ErrMapTooLarge naming .bss", tc.name, err)
		}
		if n >= 64<<20 {
			t.Errorf("%s: allocated %d bytes", tc.name, n)
		}
	}
	// A .bss within MaxGlobalData but over a smaller MaxMapMemory.
	data = patchSectionSize(t, "testdata/loader.bpf.o", ".bss", 8<<20)
	_, err := elf.LoadReader(bytes.NewReader(data), &elf.Options{MaxMapMemory: 1 << 20})
	if !errors.Is(err, elf.ErrMapTooLarge) || !strings.Contains(err.Error(), ".bss") {
		t.Errorf("8 MiB .bss, 1 MiB limit: err = %v, want ErrMapTooLarge naming .bss", err)
	}
}

// TestSectionOutsideFile: a section with contents must lie inside the
// file.
func TestSectionOutsideFile(t *testing.T) {
	for _, sec := range []string{".data", ".BTF", ".symtab"} {
		data := patchSectionSize(t, "testdata/loader.bpf.o", sec, 1<<40)
		var err error
		n := allocated(func() { _, err = elf.LoadReader(bytes.NewReader(data), nil) })
		if !errors.Is(err, elf.ErrMalformed) || !strings.Contains(err.Error(), sec) {
			t.Errorf("%s: err = %v, want ErrMalformed naming the section", sec, err)
		}
		if n >= 64<<20 {
			t.Errorf("%s: allocated %d bytes", sec, n)
		}
	}
	// Just past the end, from a file on disk.
	data := patchSectionSize(t, "testdata/loader.bpf.o", ".data", 0)
	f, _ := stdelf.NewFile(bytes.NewReader(data))
	s := f.Section(".data")
	data = patchSectionSize(t, "testdata/loader.bpf.o", ".data", uint64(len(data))-s.Offset+1)
	path := t.TempDir() + "/past.bpf.o"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := elf.Load(path, nil); !errors.Is(err, elf.ErrMalformed) || !strings.Contains(err.Error(), ".data") {
		t.Errorf("one byte past the end: err = %v, want ErrMalformed naming .data", err)
	}
}

// TestMaxMapMemory: a collection whose maps would take more than
// Options.MaxMapMemory is refused, naming the map; replaced maps do not
// count.
func TestMaxMapMemory(t *testing.T) {
	const obj, prog = "testdata/errors.bpf.o", "values_user"
	spec := only(t, obj, prog)
	values := spec.Maps["values"]

	coll, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
	if err != nil {
		t.Fatal(err)
	}
	coll.Close()

	// Over the default limit, whatever the machine.
	huge := only(t, obj, prog)
	huge.Maps["values"].MaxEntries = 1 << 31
	if _, err := elf.NewCollection(huge, &elf.Options{Helpers: testHelpers()}); !errors.Is(err, elf.ErrMapTooLarge) || !strings.Contains(err.Error(), "map values") {
		t.Errorf("2^31 entries: err = %v, want ErrMapTooLarge naming map values", err)
	}

	// Over a small limit.
	_, err = elf.NewCollection(spec, &elf.Options{Helpers: testHelpers(), MaxMapMemory: 1})
	if !errors.Is(err, elf.ErrMapTooLarge) || !strings.Contains(err.Error(), "MaxMapMemory") {
		t.Errorf("limit 1: err = %v, want ErrMapTooLarge", err)
	}

	// Replaced, the map does not count.
	m, err := maps.New(&maps.Spec{Name: "values", Type: maps.Type(values.Type), KeySize: values.KeySize, ValueSize: values.ValueSize, MaxEntries: values.MaxEntries})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	coll, err = elf.NewCollection(spec, &elf.Options{Helpers: testHelpers(), MaxMapMemory: 1,
		MapReplacements: map[string]maps.Map{"values": m}})
	if err != nil && errors.Is(err, elf.ErrMapTooLarge) && strings.Contains(err.Error(), "map values") {
		t.Errorf("replaced map counted: %v", err)
	}
	if err == nil {
		coll.Close()
	}

	// No limit.
	coll, err = elf.NewCollection(spec, &elf.Options{Helpers: testHelpers(), MaxMapMemory: elf.NoMapMemoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	coll.Close()
}

// BenchmarkHugeBSS measures the refusal of an object whose .bss claims
// 2.9 GB.
func BenchmarkHugeBSS(b *testing.B) {
	data := patchSectionSize(b, "testdata/loader.bpf.o", ".bss", 0xb0000008)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := elf.LoadReader(bytes.NewReader(data), nil); !errors.Is(err, elf.ErrMapTooLarge) {
			b.Fatal(err)
		}
	}
}

// TestTruncated: an object cut short says so, whatever the cut.
func TestTruncated(t *testing.T) {
	data, err := os.ReadFile("testdata/loader.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 16, 63, 64, 300, len(data) / 2, len(data) - 1} {
		_, err := elf.LoadSpecFromReader(bytes.NewReader(data[:n]))
		if !errors.Is(err, elf.ErrTruncated) || !errors.Is(err, elf.ErrMalformed) {
			t.Errorf("first %d of %d bytes: err = %v, want ErrTruncated and ErrMalformed", n, len(data), err)
		}
	}
}
