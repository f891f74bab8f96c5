package elf_test

import (
	"errors"
	"testing"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/maps"
)

// Programs use the replacement maps, the collection leaves them open, and
// variables of a replaced section are windows on the replacement.
func TestMapReplacements(t *testing.T) {
	slots, err := maps.New(&maps.Spec{Name: "slots", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer slots.Close()
	data, err := maps.New(&maps.Spec{Name: ".data", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	// The replacement's contents are kept: data_init is 40, not the
	// object's 7.
	if err := data.Update(uint32(0), uint64(40), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}

	coll := loadTest(t, &elf.Options{MapReplacements: map[string]maps.Map{"slots": slots, ".data": data}})
	if coll.Map("slots") != slots || coll.Map(".data") != data {
		t.Fatal("collection does not hold the replacement maps")
	}
	run(t, coll, "maps_prog", ctx(0, 3))
	var v uint64
	if err := slots.Lookup(uint32(1), &v); err != nil || v != 2 {
		t.Fatalf("slots[1] = %d, %v; want 2 written by the program", v, err)
	}
	if got := run(t, coll, "calls", ctx(5, 0)); got != 2*5+1+40+3 {
		t.Fatalf("calls = %d, want %d (data_init from the replacement)", got, 2*5+1+40+3)
	}
	if err := coll.Variables["data_init"].Set(uint64(9)); err != nil {
		t.Fatal(err)
	}
	if err := data.Lookup(uint32(0), &v); err != nil || v != 9 {
		t.Fatalf("replacement .data = %d, %v; want 9 set through the variable", v, err)
	}

	if err := coll.Close(); err != nil {
		t.Fatal(err)
	}
	if err := slots.Lookup(uint32(1), &v); err != nil {
		t.Fatalf("Close closed a replacement map: %v", err)
	}
}

func TestMapReplacementErrors(t *testing.T) {
	wrong, err := maps.New(&maps.Spec{Name: "slots", Type: maps.Array, KeySize: 4, ValueSize: 4, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	data, err := maps.New(&maps.Spec{Name: ".data", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	tests := []struct {
		name string
		opts *elf.Options
		want error
	}{
		{"value size", &elf.Options{MapReplacements: map[string]maps.Map{"slots": wrong}}, elf.ErrMapReplacement},
		{"unknown map", &elf.Options{MapReplacements: map[string]maps.Map{"nope": wrong}}, elf.ErrMissingSymbol},
		{"kernel only", &elf.Options{MapReplacements: map[string]maps.Map{"slots": nil}}, elf.ErrKernelOnlyMap},
		{"variable of replaced section", &elf.Options{
			MapReplacements: map[string]maps.Map{".data": data},
			Variables:       map[string]any{"data_init": uint64(1)},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Helpers = testHelpers()
			coll, err := elf.Load("testdata/loader.bpf.o", tt.opts)
			if err == nil {
				coll.Close()
				t.Fatal("loaded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			t.Log(err)
		})
	}
}
