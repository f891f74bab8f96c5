package vm_test

import (
	"testing"

	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/vm"
)

// suite loads the conformance suite, or skips t with the reason.
func suite(t *testing.T) []*conformance.Test {
	dir, ok := conformance.SharedDir()
	if !ok {
		t.Skip("conformance suite not found (../shared/conformance or $UEBPF_CONFORMANCE_DIR)")
	}
	tests, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tests
}

func TestConformance(t *testing.T) {
	for _, tc := range suite(t) {
		t.Run(tc.Name, func(t *testing.T) {
			if err := tc.Run(conformance.Interpreter); err != nil {
				t.Error(err)
			}
		})
	}
}

// The suite again with slices of 1 to 3 instructions: a slice then ends at
// nearly every charging instruction, whose effect the driver completes
// (Env.completeCharged), and every result must stay the same.
func TestConformanceTinySlices(t *testing.T) {
	tests := suite(t)
	for n := uint64(1); n <= 3; n++ {
		restore := vm.SetInterpretSlice(n)
		for _, tc := range tests {
			if err := tc.Run(conformance.Interpreter); err != nil {
				t.Errorf("slices of %d: %s: %v", n, tc.Name, err)
			}
		}
		restore()
	}
}
