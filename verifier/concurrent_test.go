package verifier_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// outcome is what a Verify call returned, as text.
func outcome(res *verifier.Result, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("insns %d, states %d, depth %d, widened %d, unproven %d",
		res.InstructionsProcessed, res.StatesStored, res.MaxCallDepth, res.LoopsWidened, res.LoopsUnproven)
}

// TestVerifyConcurrent verifies the corpus and the benchmark set's long
// loops from several goroutines at once, each in another order: every
// call must return what a call alone does, though each reuses memory
// (the pooled arena) that calls on other programs used before.
func TestVerifyConcurrent(t *testing.T) {
	type job struct {
		name string
		p    *vm.Program
		opts verifier.Options
	}
	var jobs []job
	add := func(pattern string, fixed int, readOnly bool) {
		progs, opts := clangPrograms(t, pattern, fixed, readOnly)
		for key, p := range progs {
			jobs = append(jobs, job{key, p.VM, opts[key]})
		}
	}
	add("testdata/corpus/*.bpf.o", corpusCtxSize, true)
	add("testdata/corpus/*.bpf.o", 8, false) // too small a context: many are refused
	add("../internal/benchset/c/memcpy.bpf.o", 0, false)
	if !testing.Short() {
		add("../internal/benchset/c/prime.bpf.o", 0, false)
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].name < jobs[j].name })
	want := make([]string, len(jobs))
	for i, j := range jobs {
		want[i] = outcome(verifier.Verify(j.p, &j.opts))
	}
	const goroutines = 4
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				// Each goroutine starts elsewhere, odd ones backwards.
				i := (g*len(jobs)/goroutines + k) % len(jobs)
				if g%2 == 1 {
					i = len(jobs) - 1 - i
				}
				j := jobs[i]
				if got := outcome(verifier.Verify(j.p, &j.opts)); got != want[i] {
					t.Errorf("%s: got %s, alone %s", j.name, got, want[i])
				}
			}
		}()
	}
	wg.Wait()
}
