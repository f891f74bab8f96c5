package elf_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/vm"
)

// only returns a copy of the spec at path with one program left.
func only(t *testing.T, path, prog string) *ebpf.CollectionSpec {
	t.Helper()
	spec, err := elf.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	for name := range spec.Programs {
		if name != prog {
			delete(spec.Programs, name)
		}
	}
	if spec.Programs[prog] == nil {
		t.Fatalf("%s has no program %s", path, prog)
	}
	return spec
}

func TestLoadErrors(t *testing.T) {
	const obj = "testdata/errors.bpf.o"
	tests := []struct {
		prog  string
		edit  func(*ebpf.CollectionSpec)
		err   error
		words []string // the message must name these
	}{
		{prog: "gpl_helper", err: elf.ErrGPLOnly, words: []string{"gpl_helper", "uebpf/gpl", "bpf_trace_printk", "Proprietary"}},
		{prog: "missing_helper", err: vm.ErrHelperMissing, words: []string{"missing_helper", "helper 16 (GetCurrentComm)"}},
		{prog: "perf_user", err: elf.ErrUnsupportedMapType, words: []string{"perf_user", "map events", "PerfEventArray"}},
		{prog: "kfunc_user", err: elf.ErrUnsupportedRelocation, words: []string{"kfunc_user", "bpf_rcu_read_lock"}},
		{prog: "values_user", edit: func(s *ebpf.CollectionSpec) { delete(s.Maps, "values") },
			err: elf.ErrMissingSymbol, words: []string{"values_user", `map "values"`}},
		{prog: "values_user", edit: func(s *ebpf.CollectionSpec) { s.Maps["values"].Type = ebpf.MapType(200) },
			err: elf.ErrUnsupportedMapType, words: []string{"map values"}},
		{prog: "values_user", edit: func(s *ebpf.CollectionSpec) { s.Maps["values"].KeySize = 3 },
			words: []string{"map values", "key size 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.prog, func(t *testing.T) {
			spec := only(t, obj, tt.prog)
			if tt.edit != nil {
				tt.edit(spec)
			}
			_, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
			if err == nil {
				t.Fatal("loaded")
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// A GPL-compatible license allows GPL-only helpers.
func TestGPLLicense(t *testing.T) {
	for _, license := range []string{"GPL", "Dual MIT/GPL", "Dual BSD/GPL", "GPL v2"} {
		spec := only(t, "testdata/errors.bpf.o", "gpl_helper")
		spec.Programs["gpl_helper"].License = license
		coll, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
		if err != nil {
			t.Errorf("license %q: %v", license, err)
			continue
		}
		coll.Close()
	}
}

// Kernel programs may use maps the VM has no implementation for.
func TestKernelOnlyMap(t *testing.T) {
	spec := only(t, "testdata/errors.bpf.o", "perf_kernel")
	coll, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if coll.Map("events") != nil {
		t.Error("a perf event array exists in userspace")
	}
	if !errors.Is(coll.MapError("events"), elf.ErrUnsupportedMapType) {
		t.Errorf("MapError = %v", coll.MapError("events"))
	}
	if coll.KernelSpec.Programs["perf_kernel"] == nil || coll.KernelSpec.Maps["events"] == nil {
		t.Error("KernelSpec lacks the kernel program or its map")
	}
}

func TestMalformedObject(t *testing.T) {
	_, err := elf.LoadReader(strings.NewReader("\x7fELF not really"), nil)
	if err == nil {
		t.Fatal("loaded garbage")
	}
}

// Map-in-map types have no userspace implementation yet: the inner map is
// kept on the spec, and a VM program using the outer map fails to load.
func TestMapInMap(t *testing.T) {
	spec := only(t, "testdata/errors.bpf.o", "values_user")
	spec.Maps["values"].Type = ebpf.ArrayOfMaps
	spec.Maps["values"].ValueSize = 4
	spec.Maps["values"].InnerMap = &ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 16}
	_, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
	if !errors.Is(err, elf.ErrUnsupportedMapType) || !strings.Contains(err.Error(), "ArrayOfMaps") {
		t.Errorf("program using a map of maps: %v", err)
	}
}

func TestBigEndianObject(t *testing.T) {
	spec := only(t, "testdata/errors.bpf.o", "values_user")
	spec.ByteOrder = binary.BigEndian
	if _, err := elf.NewCollection(spec, nil); !errors.Is(err, elf.ErrByteOrder) {
		t.Errorf("big-endian object: %v", err)
	}
}
