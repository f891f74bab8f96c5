package asm_test

import (
	"bytes"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
)

func loadSuite(t testing.TB) []*conformance.Test {
	t.Helper()
	dir, ok := conformance.SharedDir()
	if !ok {
		t.Skipf("conformance suite not found (looked at %q; set %s)", dir, conformance.EnvDir)
	}
	tests, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tests
}

// Every program of the suite assembles, disassembles without complaint, and
// comes back slot for slot; "-- raw" sections match our encoding.
func TestConformanceFilesRoundTrip(t *testing.T) {
	for _, ct := range loadSuite(t) {
		t.Run(ct.Name, func(t *testing.T) {
			insns, err := asm.Assemble(ct.Asm)
			if err != nil {
				t.Fatal(err)
			}
			if len(insns) == 0 {
				t.Fatal("no instructions")
			}
			if _, err := asm.Disassemble(insns); err != nil {
				t.Errorf("Disassemble: %v", err)
			}
			requireRoundTrip(t, insns)
			if ct.Raw != nil {
				if got := asm.Encode(nil, insns); !bytes.Equal(got, ct.Raw) {
					t.Errorf("encoding differs from the raw section\n got % x\nwant % x", got, ct.Raw)
				}
			}
		})
	}
}
