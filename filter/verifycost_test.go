package filter_test

import (
	"testing"

	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// Pending float operands once multiplied the verifier's paths: the first
// of these took 17 s to verify and the second exceeded its limit (a
// FuzzCompile finding). Each must verify in little work now.
func TestFloatFiltersVerifyCheaply(t *testing.T) {
	fields := testFields(t)
	for _, expr := range []string{
		"a!=00&(g!=0&(g!=0|(g!=0)))",
		"a!=0&(g!=0&(g!=0|(g!=0|(g!=0))))",
		"a==(g!=(0&(g!=(0|(g!=(0&(g!=(1|(g!=0)))))))))",
		"(g<1)|(g<2)|(g<3)|(g<4)|(g<5)|(g<6)",
		"(g<1||g<2)&&(g<3||g<4)&&(g<5||g<h)&&(h<g||g==1)",
		"a!=0&(f!=0&(f!=0|(f!=0|(f!=0))))",
	} {
		f, err := filter.Compile(expr, fields)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		p, err := vm.Load(&vm.ProgramSpec{Instructions: f.Instructions()}, &vm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := verifier.Verify(p, &verifier.Options{ContextSize: f.RecordSize()})
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		if r.InstructionsProcessed > 20_000 {
			t.Errorf("%q: the verifier processed %d instructions", expr, r.InstructionsProcessed)
		}
	}
}
