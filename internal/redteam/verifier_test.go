package redteam

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// TestHostileVerifierReuse verifies unsafe programs between safe ones
// that fill the verifier's pooled memory with states (package verifier
// reuses it from one Verify call to the next), from 4 goroutines, in a
// child process: every unsafe program is refused with the error it gets
// alone, and every safe one is accepted. A state left over from another
// program that pruned a path would let an unsafe one through.
func TestHostileVerifierReuse(t *testing.T) {
	isolated(t, verifierReuse)
}

// verifierCase is a program for a 64-byte context and whether it is safe.
type verifierCase struct {
	name, src string
	safe      bool
}

func verifierCases() []verifierCase {
	// Branches that each store a byte of their own to the stack: many
	// states to store and compare, more than the pool keeps (64).
	var wide strings.Builder
	wide.WriteString("mov %r0, 0\n")
	for i := range 8 {
		fmt.Fprintf(&wide, "ldxb %%r2, [%%r1+%d]\njeq %%r2, %d, +1\nstxb [%%r10-%d], %%r2\nadd %%r0, 1\n", i, i, i%64+1)
	}
	wide.WriteString("exit")
	// The safe and the unsafe version of a context read at a variable
	// offset differ only in the bound: a visit of the safe one's must
	// not prune the unsafe one's path.
	read := func(bound int) string {
		return fmt.Sprintf("ldxb %%r2, [%%r1+0]\nmov %%r0, 0\njgt %%r2, %d, +3\nmov %%r3, %%r1\nadd %%r3, %%r2\nldxb %%r0, [%%r3+0]\nexit", bound)
	}
	return []verifierCase{
		{"wide", wide.String(), true},
		{"bounded read", read(63), true},
		{"read one past the context", read(64), false},
		{"uninitialized stack on one path", "ldxb %r2, [%r1+0]\nmov %r0, 0\njgt %r2, 10, +1\nldxdw %r0, [%r10-8]\nexit", false},
		{"read past the context", "ldxdw %r0, [%r1+60]\nexit", false},
		{"endless loop", "mov %r0, 0\nja -1\nexit", false},
		{"bounded loop", "mov %r0, 0\nadd %r0, 1\njlt %r0, 100, -2\nexit", true},
	}
}

func verifierReuse(*testing.T) (string, error) {
	cases := verifierCases()
	verify := func(c verifierCase) (*verifier.Result, error) {
		insns, err := asm.Assemble(c.src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		p, err := vm.Load(&vm.ProgramSpec{Name: c.name, Instructions: insns}, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		return verifier.Verify(p, &verifier.Options{ContextSize: 64})
	}
	// What each program gets alone.
	alone := make([]string, len(cases))
	for i, c := range cases {
		res, err := verify(c)
		if c.name == "wide" && err == nil && res.StatesStored <= 64 {
			return "", fmt.Errorf("wide stores %d states: too few to fill the verifier's pool", res.StatesStored)
		}
		if (err == nil) != c.safe {
			return "", fmt.Errorf("%s alone: %v, want safe=%v", c.name, err, c.safe)
		}
		if err != nil {
			alone[i] = err.Error()
		}
	}
	const workers, rounds = 4, 300
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				i := (r*7 + w*3) % len(cases)
				got := ""
				if _, err := verify(cases[i]); err != nil {
					got = err.Error()
				}
				if got != alone[i] {
					errs <- fmt.Errorf("%s (worker %d, round %d): %q, alone %q", cases[i].name, w, r, got, alone[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	return fmt.Sprintf("%d verifications of %d programs, each as alone", workers*rounds, len(cases)), nil
}
