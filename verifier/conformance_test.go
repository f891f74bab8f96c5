package verifier_test

import (
	"errors"
	"testing"

	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// TestConformanceSuite verifies every program of the conformance suite
// with its memory as the context, and runs the accepted ones. It reports
// how many are accepted and why the others are refused.
func TestConformanceSuite(t *testing.T) {
	dir, ok := conformance.SharedDir()
	if !ok {
		t.Skipf("conformance suite not found (%s)", dir)
	}
	tests, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	reasons := map[string][]string{}
	for _, tc := range tests {
		insns, err := tc.Instructions()
		if err != nil {
			t.Fatal(err)
		}
		p, err := vm.Load(&vm.ProgramSpec{Name: tc.Name, Instructions: insns}, &vm.Options{Helpers: conformance.Helpers()})
		if err != nil {
			reasons["load: "+err.Error()] = append(reasons["load: "+err.Error()], tc.Name)
			continue
		}
		_, err = verifier.Verify(p, &verifier.Options{ContextSize: len(tc.Mem), ContextLengthInR2: true})
		if err != nil {
			var ve *verifier.Error
			key := err.Error()
			if errors.As(err, &ve) {
				key = ve.Err.Error()
			}
			reasons[key] = append(reasons[key], tc.Name)
			if testing.Verbose() {
				t.Logf("%s: %v", tc.Name, err)
			}
			continue
		}
		accepted++
		if _, err := p.Run(append([]byte(nil), tc.Mem...)); err != nil && tc.ErrorText == "" {
			t.Errorf("%s: accepted but run failed: %v", tc.Name, err)
		}
	}
	t.Logf("accepted %d of %d conformance programs", accepted, len(tests))
	for k, names := range reasons {
		t.Logf("refused %d: %s: %v", len(names), k, names)
	}
	if accepted < 250 {
		t.Errorf("only %d programs accepted", accepted)
	}
}
