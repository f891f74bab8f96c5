package kerneldiff

import (
	"errors"
	"fmt"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/racebuild"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// TestVerifierAccepts runs uebpf's verifier on generated programs, which
// the kernel's verifier accepts (TestKernelAgreement checks that): it
// must accept them too, or be out of its complexity budget (it has no
// precision tracking, so loops cost it more than they cost Linux). A
// refusal for any other reason is a false positive of uebpf's verifier
// or a program the kernel accepts only as root (a pointer leak).
func TestVerifierAccepts(t *testing.T) {
	elem, err := maps.New(arraySpec())
	if err != nil {
		t.Fatal(err)
	}
	tails, err := maps.New(&maps.Spec{Name: "tails", Type: maps.ProgramArray, KeySize: 4, ValueSize: 4,
		MaxEntries: ProgArraySlots})
	if err != nil {
		t.Fatal(err)
	}
	table := []vm.Map{elem, tails}
	hs := helpers.Standard(nil)
	programs := uint64(300)
	if racebuild.Enabled {
		programs = 60
	}
	step := uint64(1)
	if !long() {
		programs, step = 60, 5
		t.Logf("verifying %d programs, every %dth seed: UEBPF_LONG=1 verifies 300, every seed", programs, step)
	}
	accepted, tooComplex := 0, 0
	for i := range programs {
		seed := i * step
		p := Generate(seed, Config{V4: true})
		for i, insns := range append([][]asm.Instruction{p.Insns}, p.Tails...) {
			what := "main"
			if i > 0 {
				what = fmt.Sprintf("tail %d", i-1)
			}
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: table}, &vm.Options{Helpers: hs})
			if err != nil {
				t.Fatalf("seed %d: %s: %v", seed, what, err)
			}
			_, err = verifier.Verify(vp, &verifier.Options{ContextSize: contextSize, MaxInstructions: 200_000})
			switch {
			case err == nil:
				accepted++
			case errors.Is(err, verifier.ErrTooComplex):
				tooComplex++
			default:
				t.Errorf("seed %d: %s: %v\n%s", seed, what, err, Listing(insns))
			}
		}
	}
	t.Logf("%d programs accepted, %d too complex", accepted, tooComplex)
	if tooComplex > accepted/20 {
		t.Errorf("%d programs too complex for uebpf's verifier, %d accepted", tooComplex, accepted)
	}
}
