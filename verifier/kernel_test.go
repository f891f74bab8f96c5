package verifier_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	ciliumasm "github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// The kernel agreement test loads every program of the corpus and of the
// asm suites into Linux as a raw tracepoint program, whose context is 12
// read-only u64 arguments, and compares Linux's verdict with uebpf's in
// the same environment: a 96-byte read-only context and, since the test
// runs as root and Linux lets privileged loaders leak pointers, pointer
// leaks allowed.
var kernelOpts = verifier.Options{ContextSize: 96, ContextReadOnly: true, AllowPointerLeaks: true}

// explainedDisagreements are the programs on which uebpf and Linux
// disagree because they allow different things, each with the reason.
// Any other disagreement fails the test.
var explainedDisagreements = map[string]string{
	// Linux lets privileged loaders (CAP_PERFMON: allow_uninit_stack)
	// read stack bytes never written; uebpf refuses such reads always.
	"neg/uninitialised reads/stack 8 bytes":               uninitStack,
	"neg/uninitialised reads/stack partly written":        uninitStack,
	"neg/uninitialised reads/helper key uninit":           uninitStack,
	"neg/uninitialised reads/callback reads caller stack": uninitStack,
	// uebpf's context is plain memory; Linux's raw_tp context is not
	// memory a helper may read.
	"neg/bad helper arguments/ctx as key": "uebpf lets helpers read the context as memory; Linux refuses a raw_tp ctx as a helper memory argument",
	// Linux checks raw_tp context accesses for alignment (off % size).
	"neg/context out of bounds/straddles end": "Linux requires aligned raw_tp context reads (offset a multiple of the size); uebpf, whose context is plain memory, does not",
	// Linux rewrites context accesses, so they must be at a constant
	// offset from the unmodified ctx pointer.
	"neg/context out of bounds/moved":       modifiedCtx,
	"pos/loop over context":                 modifiedCtx,
	"corpus/bounded_for.bpf.o:sum_args":     modifiedCtx,
	"corpus/loop_subprog.bpf.o:matrix":      modifiedCtx,
	"corpus/stack_buffers.bpf.o:stack_fill": modifiedCtx,
	// Loops Linux explores iteration by iteration up to its 1M limit;
	// uebpf proves them with an invariant and a ranking function.
	"loop/unknown bound":        widenedLoop,
	"loop/nested loops":         widenedLoop,
	"loop/32-bit unknown bound": widenedLoop,
	"loop/countdown":            widenedLoop,
	// Loops that end because a counter reaches another register. Linux
	// 6.18 stops on these with EFAULT and an empty log (an internal
	// error, not a verdict on the program); it would otherwise explore
	// up to 2^32 iterations and give up at its 1M limit.
	"loop/trial division":           relationalLoop,
	"loop/trial division up to d*d": relationalLoop,
}

const (
	widenedLoop    = "Linux explores loops iteration by iteration and gives up after 1M instructions; uebpf proves them with a loop invariant (widening) and a ranking function"
	relationalLoop = "Linux cannot explore a loop of up to 2^32 iterations (6.18 even stops with EFAULT on this one); uebpf proves it with an invariant that relates the counter to the register it reaches"
	uninitStack    = "Linux lets privileged loaders read uninitialised stack (allow_uninit_stack); uebpf never does"
	modifiedCtx    = "Linux refuses context accesses through a moved ctx pointer (it rewrites them at load); uebpf's context is plain memory, so ctx + constant is fine"
)

// kernelLong are the programs that Linux or uebpf explores up to its
// limit of a million instructions, for seconds each. They are compared
// only with UEBPF_LONG=1 (as in CI); the other loops of the suites still
// are by default.
var kernelLong = map[string]bool{
	"neg/loops/step past an unknown bound": true,
	"neg/loops/down by two past zero":      true,
	"neg/loops/unknown 64-bit bound":       true,
	"neg/loops/wrong direction":            true,
	"neg/loops/counter without bound":      true,
	"neg/loops/counter wraps":              true,
	"neg/loops/nested inner counter reset": true,
	"neg/loops/too complex body":           true,
	"neg/loops/divisor steps by two":       true,
	"neg/loops/remainder zero goes back":   true,
	"loop/unknown bound":                   true,
	"loop/countdown":                       true,
	"loop/nested loops":                    true,
	"loop/32-bit unknown bound":            true,
	"loop/spilled sum":                     true,
	"loop/too many iterations":             true,
}

// kernelMaps creates Linux maps like testMaps, in the same order.
func kernelMaps(t *testing.T) []*ebpf.Map {
	t.Helper()
	specs := []*ebpf.MapSpec{
		{Name: "array", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 4},
		{Name: "hash", Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 16},
		{Name: "rb", Type: ebpf.RingBuf, MaxEntries: 4096},
		{Name: "progs", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 4},
		{Name: "rodata", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1, Flags: 0x80, // BPF_F_RDONLY_PROG
			Contents: []ebpf.MapKV{{Key: uint32(0), Value: []byte("hi %d\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}}},
		{Name: "data", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1},
	}
	var out []*ebpf.Map
	for _, s := range specs {
		m, err := ebpf.NewMap(s)
		if err != nil {
			t.Fatalf("kernel map %s: %v", s.Name, err)
		}
		t.Cleanup(func() { m.Close() })
		if s.Flags&0x80 != 0 {
			// A constant string argument must live in a frozen map.
			if err := m.Freeze(); err != nil {
				t.Fatalf("freeze %s: %v", s.Name, err)
			}
		}
		out = append(out, m)
	}
	return out
}

// kernelInstructions turns a program of the asm suites into cilium/ebpf
// instructions, map indexes replaced by the kernel maps' descriptors.
func kernelInstructions(insns []asm.Instruction, kmaps []*ebpf.Map) (ciliumasm.Instructions, error) {
	var buf bytes.Buffer
	for i, ins := range insns {
		imm := ins.Imm
		if ins.IsLDDW() && (ins.Src == asm.PseudoMapFD || ins.Src == asm.PseudoMapValue) {
			if int(imm) >= len(kmaps) {
				return nil, fmt.Errorf("insn %d: map %d", i, imm)
			}
			imm = int32(kmaps[imm].FD())
		}
		var b [8]byte
		b[0] = ins.Opcode
		b[1] = ins.Dst&0xf | ins.Src<<4
		binary.LittleEndian.PutUint16(b[2:], uint16(ins.Offset))
		binary.LittleEndian.PutUint32(b[4:], uint32(imm))
		buf.Write(b[:])
	}
	out, err := ciliumasm.AppendInstructions(nil, &buf, binary.LittleEndian, "linux")
	if err != nil {
		return nil, err
	}
	// Linux wants BTF func_info for programs with callbacks: describe
	// every function as taking and returning numbers.
	starts := map[int]bool{}
	hasFunc := false
	for i, ins := range insns {
		if ins.IsLDDW() && ins.Src == asm.PseudoFunc {
			starts[i+1+int(ins.Imm)], hasFunc = true, true
		}
		if ins.Opcode == asm.OpCall && ins.Src == asm.PseudoCall {
			starts[i+1+int(ins.Imm)] = true
		}
	}
	if !hasFunc {
		return out, nil
	}
	u64 := &btf.Int{Name: "u64", Size: 8}
	proto := &btf.FuncProto{Return: u64, Params: []btf.FuncParam{{Name: "a", Type: u64}, {Name: "b", Type: u64}}}
	slot := 0
	for i := range out {
		if slot == 0 || starts[slot] {
			fn := &btf.Func{Name: fmt.Sprintf("f%d", slot), Type: proto, Linkage: btf.StaticFunc}
			if slot == 0 {
				fn.Linkage = btf.GlobalFunc
			}
			out[i] = btf.WithFuncMetadata(out[i], fn)
		}
		slot += int(out[i].Size() / ciliumasm.InstructionSize)
	}
	return out, nil
}

// kernelVerdict loads a program into Linux: nil if the verifier accepts
// it, else the last line of its log. Linux verifies without a log first
// (a program it explores for a million instructions writes a log of
// gigabytes, which takes far longer than the verdict); only a refusal
// the test reports is verified again, with the log, for its reason.
func kernelVerdict(spec *ebpf.ProgramSpec, withLog bool) error {
	p, err := ebpf.NewProgramWithOptions(spec, ebpf.ProgramOptions{LogDisabled: !withLog, LogSizeStart: 1 << 20})
	if err != nil {
		return kernelReason(err)
	}
	p.Close()
	return nil
}

func kernelReason(err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) && len(ve.Log) > 0 {
		lines := ve.Log
		for len(lines) > 0 && (strings.HasPrefix(lines[len(lines)-1], "processed ") || strings.TrimSpace(lines[len(lines)-1]) == "") {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > 0 {
			return errors.New(lines[len(lines)-1])
		}
	}
	return err
}

// usesAppHelpers reports whether a program calls helpers Linux does not
// have (application helpers, numbered from 0x10000).
func usesAppHelpers(insns []asm.Instruction) bool {
	for _, ins := range insns {
		if ins.Opcode == asm.OpCall && ins.Src == 0 && ins.Imm >= 0x10000 {
			return true
		}
	}
	return false
}

func requireKernelBPF(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("kernel agreement needs root to load programs into Linux")
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		t.Skipf("kernel BPF unavailable: %v", err)
	}
	m.Close()
}

type agreement struct {
	compared, agreed, explained int
	skipped                     map[string]int
}

// compare counts the verdicts of uebpf (ours) and Linux (theirs) on the
// program name; reason reloads the program into Linux with the log, for
// the reason of a refusal the test reports.
func (a *agreement) compare(t *testing.T, name string, ours, theirs error, reason func() error) {
	t.Helper()
	a.compared++
	if (ours == nil) == (theirs == nil) {
		a.agreed++
		if why, ok := explainedDisagreements[name]; ok {
			t.Errorf("%s: listed as a disagreement (%s) but both sides now say %v", name, why, verdict(ours))
		}
		return
	}
	if why, ok := explainedDisagreements[name]; ok {
		a.explained++
		t.Logf("disagreement %s: uebpf %s, Linux %s: %s", name, verdict(ours), verdict(theirs), why)
		return
	}
	if theirs != nil {
		theirs = reason()
	}
	t.Errorf("unexplained disagreement %s: uebpf %s (%v), Linux %s (%v)", name, verdict(ours), firstLine(ours), verdict(theirs), theirs)
}

func verdict(err error) string {
	if err == nil {
		return "accepts"
	}
	return "refuses"
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// TestKernelAgreement compares uebpf's verdicts with Linux's on the clang
// corpus and the asm suites (negative and positive).
func TestKernelAgreement(t *testing.T) {
	requireKernelBPF(t)
	var a agreement
	a.skipped = map[string]int{}

	// The asm suites.
	kmaps := kernelMaps(t)
	umaps := testMaps(t)
	type named struct{ name, src string }
	var progs []named
	for cat, cases := range negativeSuite {
		for _, tc := range cases {
			progs = append(progs, named{"neg/" + cat + "/" + tc.name, tc.src})
		}
	}
	for _, tc := range positiveSuite {
		progs = append(progs, named{"pos/" + tc.name, tc.src})
	}
	for _, tc := range widenedLoops {
		progs = append(progs, named{"loop/" + tc.name, tc.src})
	}
	known := map[string]bool{}
	for _, p := range progs {
		known[p.name] = true
	}
	for name := range kernelLong {
		if !known[name] {
			t.Errorf("kernelLong lists %q, which no suite has", name)
		}
	}
	nLong := 0
	for _, p := range progs {
		if kernelLong[p.name] && !long() {
			nLong++
			continue
		}
		insns, err := asm.Assemble(p.src)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if usesAppHelpers(insns) {
			a.skipped["application helper"]++
			continue
		}
		prog, err := vm.Load(&vm.ProgramSpec{Name: "k", Instructions: insns, Maps: umaps}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			a.skipped["not loadable by vm"]++
			continue
		}
		o := kernelOpts
		_, ours := verifier.Verify(prog, &o)
		kinsns, err := kernelInstructions(insns, kmaps)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		kspec := &ebpf.ProgramSpec{Name: "k", Type: ebpf.RawTracepoint, License: "GPL", Instructions: kinsns}
		a.compare(t, p.name, ours, kernelVerdict(kspec, false), func() error { return kernelVerdict(kspec, true) })
	}

	// The clang corpus: the kernel loads each program alone with the
	// object's maps, created by cilium/ebpf.
	paths, err := filepath.Glob("testdata/corpus/*.bpf.o")
	if err != nil || len(paths) == 0 {
		t.Fatal("no corpus objects")
	}
	uprogs, _ := clangPrograms(t, "testdata/corpus/*.bpf.o", 0, true)
	for _, path := range paths {
		spec, err := ebpf.LoadCollectionSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		for name := range spec.Programs {
			key := filepath.Base(path) + ":" + name
			up, ok := uprogs[key]
			if !ok {
				t.Fatalf("%s not loaded by package elf", key)
			}
			o := kernelOpts
			_, ours := verifier.Verify(up.VM, &o)

			one := spec.Copy()
			for other := range one.Programs {
				if other != name {
					delete(one.Programs, other)
				}
			}
			ps := one.Programs[name]
			ps.Type, ps.AttachType, ps.AttachTo = ebpf.RawTracepoint, 0, ""
			load := func(withLog bool) error {
				coll, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{LogDisabled: !withLog, LogSizeStart: 1 << 20}})
				if err != nil {
					return kernelReason(err)
				}
				coll.Close()
				return nil
			}
			a.compare(t, "corpus/"+key, ours, load(false), func() error { return load(true) })
		}
	}
	t.Logf("compared %d programs with Linux: %d agree (%.1f%%), %d explained disagreements; not comparable: %v",
		a.compared, a.agreed, 100*float64(a.agreed)/float64(a.compared), a.explained, a.skipped)
	if nLong > 0 {
		t.Logf("left out %d programs explored for a million instructions, seconds each: UEBPF_LONG=1 go test -run TestKernelAgreement ./verifier compares them", nLong)
	}
}
