package asm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
)

// suiteSeeds returns the programs of the conformance suite, when it is
// around, as fuzzing seeds.
func suiteSeeds() []*conformance.Test {
	dir, ok := conformance.SharedDir()
	if !ok {
		return nil
	}
	tests, _ := conformance.LoadDir(dir)
	return tests
}

var handSeeds = []string{
	"mov %r0, 1\nexit",
	"lock fetch add32 [%r10-4], %r1\nexit",
	"jeq %r1, 0, done\nlddw %r0, 0x1122334455667788\ndone:\nexit",
	"call local f\nexit\nf:\nmov32 %r0, -1\nexit",
	"lddw %r1, map_val_by_idx(1)+16\nldindh %r2, 4\n.raw 0x8f\nja exit\nexit",
	"movsx3264 %r0, %r9\nsdiv32 %r0, -4\nbswap16 %r0\nja32 -1",
}

// FuzzAssemble: any text either fails with line errors or assembles to a
// program whose disassembly assembles back to it.
func FuzzAssemble(f *testing.F) {
	for _, s := range handSeeds {
		f.Add(s)
	}
	for _, ct := range suiteSeeds() {
		f.Add(ct.Asm)
	}
	f.Fuzz(func(t *testing.T, src string) {
		insns, err := asm.Assemble(src)
		if err != nil {
			var le *asm.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error without a line: %v", err)
			}
			if lines := strings.Count(src, "\n") + 1; le.Line < 1 || le.Line > lines {
				t.Fatalf("error names line %d of %d: %v", le.Line, lines, err)
			}
			return
		}
		requireRoundTrip(t, insns)
	})
}

// FuzzDisassembleRoundTrip: any bytecode disassembles, and the text
// assembles back to the same slots, .raw lines included. Format agrees
// with Disassemble on every valid slot.
func FuzzDisassembleRoundTrip(f *testing.F) {
	for _, s := range handSeeds {
		f.Add(asm.Encode(nil, asm.MustAssemble(s)))
	}
	for _, ct := range suiteSeeds() {
		if insns, err := asm.Assemble(ct.Asm); err == nil {
			f.Add(asm.Encode(nil, insns))
		}
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		insns, err := asm.Decode(code)
		if err != nil {
			return
		}
		requireRoundTrip(t, insns)
		for i := range insns {
			text := asm.Format(insns, i)
			if strings.HasPrefix(text, ".raw") {
				continue
			}
			got, err := asm.Assemble(text)
			if err != nil {
				t.Fatalf("Format(slot %d) = %q does not assemble: %v", i, text, err)
			}
			if len(got) == 0 || got[0] != insns[i] || len(got) == 2 && got[1] != insns[i+1] {
				t.Fatalf("Format(slot %d) = %q assembles to %+v, want %+v", i, text, got, insns[i:])
			}
		}
	})
}
