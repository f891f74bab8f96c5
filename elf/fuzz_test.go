package elf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/elf"
)

// FuzzLoad loads mutated objects and runs what loads: no input may panic.
// The seeds are the committed test, example and benchmark objects.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/*.o", "../examples/*/*.o", "../internal/benchset/c/*.o"} {
		paths, _ := filepath.Glob(pattern)
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	mem := make([]byte, 64)
	target := appTypes(f, true) // reaches the CO-RE code of core.bpf.o
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := elf.LoadSpecFromReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Listings (uebpf disasm) of any object parse without a panic,
		// and say what every slot is.
		for name, ps := range spec.Programs {
			if l, err := elf.NewListing(ps); err == nil {
				for pc := range l.Instructions {
					_ = asm.Format(l.Instructions, pc) + l.SourceLine(pc) + l.References[pc] + l.Symbols[pc]
				}
			} else if !strings.Contains(err.Error(), name) {
				t.Errorf("listing error does not name program %s: %v", name, err)
			}
		}
		coll, err := elf.NewCollection(spec, &elf.Options{
			Helpers:     testHelpers(),
			AllPrograms: true,
			Budget:      10000,
			// Maps are allocated up front, as in the kernel: a mutated
			// max_entries could ask for gigabytes, which the limit
			// refuses (the implementation's overhead per entry is not
			// counted, hence a limit well under the fuzzer's memory).
			MaxMapMemory: 16 << 20,
			TargetBTF:    target,
			// Poisoned relocations become helper calls: more code to reach.
			DeferCOREErrors: true,
		})
		if err != nil {
			return
		}
		defer coll.Close()
		for _, p := range coll.Programs {
			clear(mem)
			p.VM.Run(mem)
		}
	})
}
