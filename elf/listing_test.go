package elf_test

import (
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/elf"
)

// TestListing: a listing has the slots the loader loads, except the map
// indexes of lddw, which it names instead, and a source line per slot.
func TestListing(t *testing.T) {
	for _, object := range []string{"testdata/loader.bpf.o", "../examples/filter/filter.bpf.o", "../examples/tailcall/tailcall.bpf.o"} {
		spec, err := elf.LoadSpec(object)
		if err != nil {
			t.Fatal(err)
		}
		coll, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range coll.Programs {
			l, err := elf.NewListing(spec.Programs[name])
			if err != nil {
				t.Fatalf("%s %s: %v", object, name, err)
			}
			want := p.VM.Instructions()
			if len(l.Instructions) != len(want) || len(l.Symbols) != len(want) || len(l.References) != len(want) {
				t.Fatalf("%s %s: %d slots, want %d", object, name, len(l.Instructions), len(want))
			}
			if l.Symbols[0] != name {
				t.Errorf("%s: symbol of slot 0 = %q", name, l.Symbols[0])
			}
			for pc, ins := range l.Instructions {
				w := want[pc]
				if ins.IsLDDW() && (ins.Src == 1 || ins.Src == 2) {
					if l.References[pc] == "" {
						t.Errorf("%s %d: lddw src %d names nothing", name, pc, ins.Src)
					}
					w.Imm = 0
				}
				if ins != w {
					t.Errorf("%s %d: %s, want %s", name, pc, asm.Format(l.Instructions, pc), asm.Format(want, pc))
				}
				if line := l.SourceLine(pc); !strings.Contains(line, ".bpf.c:") {
					t.Errorf("%s %d: source line %q", name, pc, line)
				}
			}
		}
		coll.Close()
	}
}
