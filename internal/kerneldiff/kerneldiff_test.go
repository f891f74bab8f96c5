package kerneldiff

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/internal/racebuild"
	"github.com/uebpf/uebpf/jit"
)

var (
	flagPrograms = flag.Int("kerneldiff.programs", 0, "number of kernel-accepted programs TestKernelAgreement compares (0: 200; with UEBPF_LONG=1 2000, or 300 with -race)")
	flagFirst    = flag.Uint64("kerneldiff.first", 0, "first seed")
	flagNoV4     = flag.Bool("kerneldiff.nov4", false, "generate without cpu v4 instructions, as for kernels before 6.6")
	flagFetch    = flag.Bool("kerneldiff.stackfetch", false, "generate atomic fetches on the stack even if the kernel has FetchPrecisionBug")
	flagRecord   = flag.String("kerneldiff.record", "", "TestKernelAgreement writes the programs it compares and the kernel's outcomes to this corpus `file`")
	flagCorpus   = flag.String("kerneldiff.corpus", "", "TestRecordedAgreement compares this platform's engines with the kernel outcomes of this corpus `file`")
)

var (
	kernelOnce sync.Once
	kernelWhy  string
)

// kernelUnavailable says why this process cannot load BPF programs, or
// returns "" when it can. It tries once, for real.
func kernelUnavailable() string {
	kernelOnce.Do(func() {
		if os.Geteuid() != 0 {
			kernelWhy = "needs root: loads programs into the kernel"
			return
		}
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
		if err != nil {
			kernelWhy = fmt.Sprintf("kernel BPF not available: %v", err)
			return
		}
		m.Close()
	})
	return kernelWhy
}

// kernelTarget returns a Target on a kernel map, or skips the test when
// this process may not use BPF.
func kernelTarget(t *testing.T) *Target {
	t.Helper()
	if why := kernelUnavailable(); why != "" {
		t.Skip(why)
	}
	target, err := NewKernelTarget()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	return target
}

// TestKernelAgreement runs generated programs in the kernel, on the
// interpreter and on the JIT in every mode, and compares the map element
// (registers, stack, data) and the return value. The kernel must accept
// every program (a refusal is a generator bug) except the rare one that
// reaches the verifier's complexity limit.
func TestKernelAgreement(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	target := kernelTarget(t)
	cfg, err := KernelConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.V4 {
		t.Log("the kernel has no cpu v4 instructions: generating without them")
	}
	cfg.V4 = cfg.V4 && !*flagNoV4
	if cfg.NoStackFetch {
		t.Log("the kernel's verifier has the atomic fetch precision bug (see FetchPrecisionBug): no atomic fetches on the stack")
		cfg.NoStackFetch = !*flagFetch
	}
	programs := *flagPrograms
	step := uint64(1)
	if programs == 0 {
		switch {
		case !long():
			// Every tenth of the seeds the long run compares: seed 118,
			// which Linux explores for a million instructions (seconds),
			// is not among them.
			programs, step = 200, 10
			t.Logf("comparing %d programs, every %dth seed: UEBPF_LONG=1 compares 2000, every seed", programs, step)
		case racebuild.Enabled:
			programs = 300 // the race detector is not what this test is for
		default:
			programs = 2000
		}
	}
	var record *os.File
	if *flagRecord != "" {
		if record, err = os.Create(*flagRecord); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := record.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	start := time.Now()
	refused := map[string][]uint64{}
	nRefused, compared, mismatches := 0, 0, 0
	seed := *flagFirst
	for ; compared < programs; seed += step {
		p := Generate(seed, cfg)
		kout, err := target.RunKernel(p)
		if re := (*RefusedError)(nil); errors.As(err, &re) {
			refused[re.Reason] = append(refused[re.Reason], seed)
			if nRefused++; nRefused > 20+compared/100 {
				break
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if record != nil {
			if err := WriteRecorded(record, p, kout); err != nil {
				t.Fatal(err)
			}
		}
		outs, err := target.RunUserspace(p)
		if err != nil {
			t.Fatal(err)
		}
		compared++
		if m := Compare(p, append([]Outcome{kout}, outs...)); m != nil {
			t.Error(m)
			if mismatches++; mismatches >= 3 {
				t.Fatalf("stopping after %d mismatches", mismatches)
			}
		}
	}
	t.Logf("seeds %d..%d: %d programs compared, %d refused by the kernel, %d mismatches, %v",
		*flagFirst, seed-step, compared, nRefused, mismatches, time.Since(start).Round(time.Millisecond))
	// The generator bounds loops and forks so that programs stay far
	// below the verifier's complexity limit, but not provably: about one
	// program in 20,000 reaches it. Any other refusal is a generator bug.
	tooComplex := len(refused[ReasonTooComplex])
	switch {
	case nRefused > tooComplex:
		t.Errorf("the kernel refused %d generated programs (a generator bug):\n%s", nRefused, refusals(refused))
	case tooComplex > compared/100:
		t.Errorf("%d programs too complex for the verifier: %v", tooComplex, refused[ReasonTooComplex])
	case tooComplex > 0:
		t.Logf("%d programs too complex for the verifier: %v", tooComplex, refused[ReasonTooComplex])
	}
}

func refusals(byReason map[string][]uint64) string {
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var b strings.Builder
	for _, r := range reasons {
		fmt.Fprintf(&b, "  %q: seeds %v\n", r, byReason[r])
	}
	return b.String()
}

// TestRecordedAgreement compares this platform's engines with the kernel
// outcomes of a corpus TestKernelAgreement recorded (-kerneldiff.record),
// for a platform that cannot run the kernel side: .ci/run records on
// amd64 and replays under qemu-aarch64, which has no bpf(2).
func TestRecordedAgreement(t *testing.T) {
	if *flagCorpus == "" {
		t.Skip("no corpus: -kerneldiff.corpus FILE (written by TestKernelAgreement -kerneldiff.record FILE)")
	}
	f, err := os.Open(*flagCorpus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	corpus, err := ReadCorpus(f)
	if err != nil {
		t.Fatal(err)
	}
	target, err := NewUserspaceTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	start, mismatches := time.Now(), 0
	var engines []string
	for _, rec := range corpus {
		outs, err := target.RunUserspace(rec.Program)
		if err != nil {
			t.Fatal(err)
		}
		engines = engines[:0]
		for _, o := range outs {
			engines = append(engines, o.Engine)
		}
		if m := Compare(rec.Program, append([]Outcome{rec.Kernel}, outs...)); m != nil {
			t.Error(m)
			if mismatches++; mismatches >= 3 {
				t.Fatalf("stopping after %d mismatches", mismatches)
			}
		}
	}
	t.Logf("%d recorded programs on %s/%s (%s) against the kernel's outcomes: %d mismatches, %v",
		len(corpus), runtime.GOOS, runtime.GOARCH, strings.Join(engines, ", "), mismatches, time.Since(start).Round(time.Millisecond))
}

// TestEnginesAgree compares uebpf's engines on generated programs without
// the kernel (cpu v4 on), on a userspace array.
func TestEnginesAgree(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	target, err := NewUserspaceTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	n := uint64(500)
	if testing.Short() {
		n = 100
	}
	for seed := range n {
		p := Generate(seed, Config{V4: true})
		outs, err := target.RunUserspace(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := Compare(p, outs); m != nil {
			t.Fatal(m)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	for _, cfg := range []Config{{}, {V4: true}} {
		for seed := range uint64(50) {
			a, b := Generate(seed, cfg), Generate(seed, cfg)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d %+v: two generations differ", seed, cfg)
			}
			if c := Generate(seed+1, cfg); reflect.DeepEqual(a.Insns, c.Insns) {
				t.Fatalf("seeds %d and %d give the same program", seed, seed+1)
			}
		}
	}
}
