package elf_test

import (
	"strings"
	"testing"

	"github.com/uebpf/uebpf/elf"
)

// TestContextAndLines checks what the verifier gets from BTF: the size of
// the context a program's parameter points to, and a source line for each
// instruction slot.
func TestContextAndLines(t *testing.T) {
	tests := []struct {
		object, program string
		contextSize     int
		lineFile        string
	}{
		{"../examples/filter/filter.bpf.o", "count_slow", 16, "filter.bpf.c:"},
		{"../internal/benchset/c/memcpy.bpf.o", "memcpy_1m", 2 << 20, "memcpy.bpf.c:"},
	}
	for _, tt := range tests {
		coll, err := elf.Load(tt.object, &elf.Options{Helpers: testHelpers()})
		if err != nil {
			t.Fatal(err)
		}
		p := coll.Programs[tt.program]
		if p == nil {
			t.Fatalf("%s: no program %s", tt.object, tt.program)
		}
		if p.ContextSize != tt.contextSize {
			t.Errorf("%s: ContextSize = %d, want %d", tt.program, p.ContextSize, tt.contextSize)
		}
		n := len(p.VM.Instructions())
		for pc := range n {
			if line := p.SourceLine(pc); !strings.HasPrefix(line, tt.lineFile) {
				t.Fatalf("%s: line of pc %d = %q", tt.program, pc, line)
			}
		}
		if line := p.SourceLine(n); line != "" {
			t.Errorf("%s: line past the end = %q", tt.program, line)
		}
		coll.Close()
	}
}
