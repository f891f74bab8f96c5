package verifier_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	ciliumasm "github.com/cilium/ebpf/asm"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// benchCorpus are the corpus programs whose verification is timed, against
// Linux's on the same programs (BenchmarkKernelVerify).
var benchCorpus = []string{
	"hash_flows.bpf.o:track_flow",
	"ringbuf_reserve.bpf.o:emit_record",
	"bpf_loop_map.bpf.o:claim_slot",
	"string_copy.bpf.o:reverse_str",
	"parse_header.bpf.o:parse_tlv",
	"checksum32.bpf.o:fnv1a",
	"subprog_maps.bpf.o:count_kind_pid",
	"strlen_loop.bpf.o:name_upper",
}

// straightLine is a program of n instructions without branches: ALU
// operations, stack stores and loads.
func straightLine(n int) []asm.Instruction {
	out := asm.MustAssemble("mov %r0, 0\nmov %r2, 1\nstdw [%r10-8], 0")
	body := asm.MustAssemble("add %r0, %r2\nstxdw [%r10-8], %r0\nldxdw %r3, [%r10-8]\nxor %r2, %r3")
	for i := 0; len(out) < n-1; i++ {
		out = append(out, body[i%len(body)])
	}
	return append(out, asm.Instruction{Opcode: asm.OpExit})
}

// boundedLoop runs its body 1,000 times.
var boundedLoop = asm.MustAssemble(`
	mov %r0, 0
	mov %r2, 0
l:
	add %r0, %r2
	xor %r0, 5
	add %r2, 1
	jlt %r2, 1000, l
	exit
`)

func benchVerify(b *testing.B, p *vm.Program, opts verifier.Options) {
	b.ReportAllocs()
	var processed int
	for b.Loop() {
		res, err := verifier.Verify(p, &opts)
		if err != nil {
			b.Fatal(err)
		}
		processed = res.InstructionsProcessed
	}
	b.ReportMetric(float64(processed), "insns-processed")
}

// BenchmarkVerify times uebpf's verifier on corpus programs, a
// 100,000-instruction straight-line program, a 1,000-iteration loop and
// the benchmark set's 1 MiB memcpy loop and prime (both widened, prime
// with relations between registers).
func BenchmarkVerify(b *testing.B) {
	progs, opts := clangPrograms(b, "testdata/corpus/*.bpf.o", corpusCtxSize, true)
	for _, key := range benchCorpus {
		b.Run(strings.ReplaceAll(key, ".bpf.o:", "/"), func(b *testing.B) {
			benchVerify(b, progs[key].VM, opts[key])
		})
	}
	for _, n := range []int{10_000, 100_000} {
		p, err := vm.Load(&vm.ProgramSpec{Name: "line", Instructions: straightLine(n)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("straight_line_%d", n), func(b *testing.B) { benchVerify(b, p, verifier.Options{}) })
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: "loop", Instructions: boundedLoop}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("loop_1000", func(b *testing.B) { benchVerify(b, p, verifier.Options{}) })
	// The benchmark set's long loops, proved with loop invariants.
	bench, bopts := clangPrograms(b, "../internal/benchset/c/*.bpf.o", 0, false)
	for _, key := range []string{"memcpy.bpf.o:memcpy_1m", "prime.bpf.o:prime"} {
		b.Run("benchset/"+strings.TrimPrefix(key[strings.Index(key, ":"):], ":"), func(b *testing.B) {
			benchVerify(b, bench[key].VM, bopts[key])
		})
	}
}

var (
	verificationTime = regexp.MustCompile(`verification time (\d+) usec`)
	kernelProcessed  = regexp.MustCompile(`processed (\d+) insns`)
)

// kernelLoad loads spec into Linux and returns the verification time the
// kernel reports in its log.
func kernelLoad(b *testing.B, spec *ebpf.ProgramSpec) (ns, processed float64) {
	p, err := ebpf.NewProgramWithOptions(spec, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelStats, LogSizeStart: 1 << 16})
	if err != nil {
		b.Fatal(kernelReason(err))
	}
	defer p.Close()
	m := verificationTime.FindStringSubmatch(p.VerifierLog)
	if m == nil {
		b.Fatalf("no verification time in the log: %q", p.VerifierLog)
	}
	us, _ := strconv.Atoi(m[1])
	if m := kernelProcessed.FindStringSubmatch(p.VerifierLog); m != nil {
		n, _ := strconv.Atoi(m[1])
		processed = float64(n)
	}
	return float64(us) * 1000, processed
}

func benchKernel(b *testing.B, spec *ebpf.ProgramSpec) {
	var total, processed float64
	for b.Loop() {
		ns, n := kernelLoad(b, spec)
		total, processed = total+ns, n
	}
	b.ReportMetric(processed, "insns-processed")
	// ns/op is the whole BPF_PROG_LOAD; kernel-verify-ns/op the part the
	// kernel reports as verification.
	b.ReportMetric(total/float64(b.N), "kernel-verify-ns/op")
}

// BenchmarkKernelVerify loads the programs of BenchmarkVerify into Linux
// (as raw tracepoint programs, maps created once) and reports both the
// load time and the verification time Linux reports. It needs root.
func BenchmarkKernelVerify(b *testing.B) {
	requireKernelBPF(b)
	for _, key := range benchCorpus {
		file, name, _ := strings.Cut(key, ":")
		spec, err := ebpf.LoadCollectionSpec(filepath.Join("testdata/corpus", file))
		if err != nil {
			b.Fatal(err)
		}
		ps := spec.Programs[name].Copy()
		ps.Type, ps.AttachType, ps.AttachTo = ebpf.RawTracepoint, 0, ""
		mapsOnly := spec.Copy()
		mapsOnly.Programs = nil
		coll, err := ebpf.NewCollection(mapsOnly)
		if err != nil {
			b.Fatal(err)
		}
		for mname, m := range coll.Maps {
			if err := ps.Instructions.AssociateMap(mname, m); err != nil && !errors.Is(err, ciliumasm.ErrUnreferencedSymbol) {
				b.Fatal(err)
			}
		}
		b.Run(strings.ReplaceAll(key, ".bpf.o:", "/"), func(b *testing.B) { benchKernel(b, ps) })
		coll.Close()
	}
	for _, n := range []int{10_000, 100_000} {
		insns, err := kernelInstructions(straightLine(n), nil)
		if err != nil {
			b.Fatal(err)
		}
		spec := &ebpf.ProgramSpec{Name: "line", Type: ebpf.RawTracepoint, License: "GPL", Instructions: insns}
		b.Run(fmt.Sprintf("straight_line_%d", n), func(b *testing.B) { benchKernel(b, spec) })
	}
	insns, err := kernelInstructions(boundedLoop, nil)
	if err != nil {
		b.Fatal(err)
	}
	spec := &ebpf.ProgramSpec{Name: "loop", Type: ebpf.RawTracepoint, License: "GPL", Instructions: insns}
	b.Run("loop_1000", func(b *testing.B) { benchKernel(b, spec) })
}
