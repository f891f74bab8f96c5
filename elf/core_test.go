package elf_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/elf"
)

// appTypes builds the application's BTF for struct event: the fields in
// another order than the program was compiled with, flags optional.
func appTypes(t testing.TB, withFlags bool, extra ...btf.Type) *btf.Spec {
	t.Helper()
	u32 := &btf.Int{Name: "u32", Size: 4}
	u64 := &btf.Int{Name: "u64", Size: 8}
	event := &btf.Struct{Name: "event", Size: 16, Members: []btf.Member{
		{Name: "bytes", Type: u64, Offset: 0},
		{Name: "pid", Type: u32, Offset: 64},
	}}
	if withFlags {
		event.Size = 24
		event.Members = append(event.Members, btf.Member{Name: "flags", Type: u32, Offset: 128})
	}
	b, err := btf.NewBuilder(append([]btf.Type{event}, extra...), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := b.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// loadCORE loads the named programs of testdata/core.bpf.o.
func loadCORE(t *testing.T, opts *elf.Options, progs ...string) (*elf.Collection, error) {
	t.Helper()
	spec, err := elf.LoadSpec("testdata/core.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	for name := range spec.Programs {
		if !slices.Contains(progs, name) {
			delete(spec.Programs, name)
		}
	}
	return elf.NewCollection(spec, opts)
}

func TestCORE(t *testing.T) {
	coll, err := loadCORE(t, &elf.Options{TargetBTF: appTypes(t, true)}, "read_event", "read_flags")
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	ev := make([]byte, 24)
	binary.LittleEndian.PutUint64(ev[0:], 1000) // bytes
	binary.LittleEndian.PutUint32(ev[8:], 7)    // pid
	binary.LittleEndian.PutUint32(ev[16:], 42)  // flags
	if got := run(t, coll, "read_event", ev); got != 1007 {
		t.Errorf("read_event = %d, want 1007", got)
	}
	if got := run(t, coll, "read_flags", ev); got != 42 {
		t.Errorf("read_flags = %d, want 42", got)
	}
}

func TestCOREErrors(t *testing.T) {
	_, err := loadCORE(t, nil, "read_event")
	if !errors.Is(err, elf.ErrNoTargetBTF) || !strings.Contains(err.Error(), "read_event") {
		t.Errorf("without target BTF: %v", err)
	}
	_, err = loadCORE(t, &elf.Options{TargetBTF: appTypes(t, false)}, "read_event", "read_flags")
	if !errors.Is(err, elf.ErrCORE) || !strings.Contains(err.Error(), "read_flags") || !strings.Contains(err.Error(), "flags") {
		t.Errorf("with a missing field: %v", err)
	}
}

// With DeferCOREErrors, a guarded access to a field the application lacks
// loads and is skipped; an unguarded one fails the run, naming the
// relocation.
func TestCOREDeferred(t *testing.T) {
	coll, err := loadCORE(t, &elf.Options{TargetBTF: appTypes(t, false), DeferCOREErrors: true}, "read_flags")
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	ev := make([]byte, 16)
	if got := run(t, coll, "read_flags", ev); got != 1000 {
		t.Errorf("read_flags without flags = %d, want 1000", got)
	}

	// A target without pid: read_event reads it unconditionally.
	u64 := &btf.Int{Name: "u64", Size: 8}
	event := &btf.Struct{Name: "event", Size: 8, Members: []btf.Member{{Name: "bytes", Type: u64}}}
	b, err := btf.NewBuilder([]btf.Type{event}, nil)
	if err != nil {
		t.Fatal(err)
	}
	target, err := b.Spec()
	if err != nil {
		t.Fatal(err)
	}
	coll2, err := loadCORE(t, &elf.Options{TargetBTF: target, DeferCOREErrors: true}, "read_event")
	if err != nil {
		t.Fatal(err)
	}
	defer coll2.Close()
	_, err = coll2.Program("read_event").VM.Run(ev)
	if !errors.Is(err, elf.ErrCORE) || !strings.Contains(err.Error(), "read_event") || !strings.Contains(err.Error(), "event") {
		t.Errorf("reaching a poisoned relocation: %v", err)
	}
}

// A poisoned 64-bit relocation (an lddw, two slots) is replaced without
// moving the code around it.
func TestCOREDeferredLDDW(t *testing.T) {
	level := func(values ...btf.EnumValue) *btf.Enum {
		return &btf.Enum{Name: "level", Size: 8, Values: values}
	}
	tests := []struct {
		enum *btf.Enum
		want uint64
	}{
		{level(btf.EnumValue{Name: "LEVEL_LOW", Value: 1}, btf.EnumValue{Name: "LEVEL_HIGH", Value: 0x300000000}), 0x300000000},
		{level(btf.EnumValue{Name: "LEVEL_LOW", Value: 1}), 7}, // LEVEL_HIGH missing: the guard skips it
	}
	for _, tt := range tests {
		coll, err := loadCORE(t, &elf.Options{TargetBTF: appTypes(t, true, tt.enum), DeferCOREErrors: true}, "read_enum")
		if err != nil {
			t.Fatal(err)
		}
		if got := run(t, coll, "read_enum", nil); got != tt.want {
			t.Errorf("read_enum with %v = %#x, want %#x", tt.enum.Values, got, tt.want)
		}
		coll.Close()
	}
}
