package verifier_test

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/internal/bpfbuild"
	"github.com/uebpf/uebpf/verifier"
)

// corpusCtxSize is the context of every corpus program: struct event of
// testdata/corpus/corpus.h, read-only.
const corpusCtxSize = 64

// clangObject is one program of a clang-built object and the environment
// it is verified in.
type clangObject struct {
	path string
	opts verifier.Options
}

// clangPrograms loads every object matching pattern and returns its
// programs, by "file:function", with the verifier options for each:
// the context size from fixed (when > 0), else from the benchmark set's
// input, else from BTF (the type the program's parameter points to).
func clangPrograms(t testing.TB, pattern string, fixed int, readOnly bool) (map[string]*elf.Program, map[string]verifier.Options) {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no objects match %s", pattern)
	}
	inputs := map[string]int{}
	for _, b := range benchset.Set {
		inputs[b.Object+".bpf.o:"+b.Program] = len(b.Input())
	}
	progs := map[string]*elf.Program{}
	opts := map[string]verifier.Options{}
	for _, path := range paths {
		coll, err := elf.Load(path, &elf.Options{Helpers: helpers.Standard(nil)})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Cleanup(func() { coll.Close() })
		for name, p := range coll.Programs {
			if !elf.IsUserspaceSection(p.Section) {
				continue // runs in the kernel, whose verifier checks it
			}
			key := filepath.Base(path) + ":" + name
			size := p.ContextSize
			if n, ok := inputs[key]; ok {
				size = n
			}
			if fixed > 0 {
				size = fixed
			}
			o := verifier.Options{ContextSize: size, ContextReadOnly: readOnly, LineInfo: p.SourceLine}
			progs[key] = p
			opts[key] = o
		}
	}
	return progs, opts
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestClangCorpus verifies every program of the corpus, the examples and
// the benchmark set: all of them must be accepted.
func TestClangCorpus(t *testing.T) {
	t.Parallel()
	sets := []struct {
		name, pattern string
		ctx           int
		readOnly      bool
		min           int
	}{
		{"corpus", "testdata/corpus/*.bpf.o", corpusCtxSize, true, 30},
		{"examples", "../examples/*/*.bpf.o", 0, false, 3},
		{"benchset", "../internal/benchset/c/*.bpf.o", 0, false, 8},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			progs, opts := clangPrograms(t, set.pattern, set.ctx, set.readOnly)
			if len(progs) < set.min {
				t.Fatalf("only %d programs in %s", len(progs), set.pattern)
			}
			total := 0
			for _, key := range sortedKeys(progs) {
				o := opts[key]
				res, err := verifier.Verify(progs[key].VM, &o)
				if err != nil {
					t.Errorf("%s (%d-byte context): %v", key, o.ContextSize, err)
					continue
				}
				total += res.InstructionsProcessed
				if testing.Verbose() {
					t.Logf("%s: %d insns, %d processed, %d states", key, len(progs[key].VM.Instructions()), res.InstructionsProcessed, res.StatesStored)
				}
			}
			t.Logf("%d programs, %d instructions processed", len(progs), total)
		})
	}
}

// TestCorpusSourcesBuild checks that the committed corpus objects still
// build from their sources.
func TestCorpusSourcesBuild(t *testing.T) {
	t.Parallel()
	bpfbuild.CheckSources(t, "testdata/corpus/*.bpf.c")
}
