package vm_test

import (
	"testing"

	"github.com/uebpf/uebpf/internal/conformance"
)

func TestConformance(t *testing.T) {
	dir, ok := conformance.SharedDir()
	if !ok {
		t.Skip("conformance suite not found (../shared/conformance or $UEBPF_CONFORMANCE_DIR)")
	}
	tests, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			if err := tc.Run(conformance.Interpreter); err != nil {
				t.Error(err)
			}
		})
	}
}
