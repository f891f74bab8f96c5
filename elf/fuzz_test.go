package elf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
