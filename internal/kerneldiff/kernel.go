package kerneldiff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	ciliumasm "github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/maps"
)

// kernelSide is the kernel's half of a Target.
type kernelSide struct {
	m *ebpf.Map // owned by the kbridge.Array
}

// bpfFTestStateFreq is BPF_F_TEST_STATE_FREQ of linux/bpf.h, which x/sys
// names only on Linux.
const bpfFTestStateFreq = 1 << 3

// NewKernelTarget creates the array in the kernel (BPF_F_MMAPABLE) and
// opens it with kbridge, so that uebpf programs and kernel programs use
// the same memory. It needs CAP_BPF (root); the error says what failed.
func NewKernelTarget() (*Target, error) {
	spec := arraySpec()
	km, err := ebpf.NewMap(&ebpf.MapSpec{Name: spec.Name, Type: ebpf.Array, KeySize: spec.KeySize,
		ValueSize: spec.ValueSize, MaxEntries: spec.MaxEntries, Flags: spec.Flags})
	if err != nil {
		return nil, fmt.Errorf("creating kernel map %s: %w", spec.Name, err)
	}
	bm, err := kbridge.Open(km)
	if err != nil {
		km.Close()
		return nil, fmt.Errorf("opening kernel map %s: %w", spec.Name, err)
	}
	arr, ok := bm.(*kbridge.Array)
	if !ok {
		bm.Close()
		return nil, fmt.Errorf("kernel map %s: kbridge opened it as %T, not as an mmapped array", spec.Name, bm)
	}
	return &Target{
		vmMap:   arr,
		mem:     arr.Memory()[:ValueSize],
		helpers: helpers.Standard(nil),
		closers: []func() error{arr.Close},
		kernel:  &kernelSide{m: km},
	}, nil
}

// KernelConfig returns the generator configuration for this kernel: cpu
// v4 instructions if it has them, and no atomic fetches on the stack if
// it has the verifier bug FetchPrecisionBug detects.
func KernelConfig() (Config, error) {
	bug, err := FetchPrecisionBug()
	if err != nil {
		return Config{}, err
	}
	return Config{V4: features.HaveV4ISA() == nil, NoStackFetch: bug}, nil
}

// FetchPrecisionBug reports whether the kernel's verifier has the bug
// fixed upstream by "bpf: Fix incorrect pruning due to atomic fetch
// precision tracking" (April 2026): precision backtracking treats an
// atomic fetch from the stack as a plain store, so the stack slot (and
// what was spilled there) is not marked precise, a path that differs
// only there is pruned as safe, and branches the verifier then believes
// decided are hard-wired. The kernel then runs code that is wrong for
// that path. TestKernelAgreement found it (seed 14805 on 6.18.44).
//
// The probe spills 1 (the path the verifier walks first) or 0 (the path
// that runs, skb->len != 0), fetches it back with an atomic add of 0 and
// returns 1 if it read 1: a correct kernel returns 2.
func FetchPrecisionBug() (bool, error) {
	kinsns, err := (&kernelSide{}).instructions(fetchProbe(), nil)
	if err != nil {
		return false, fmt.Errorf("fetch precision probe: %w", err)
	}
	// BPF_F_TEST_STATE_FREQ: a state at every pruning point, so that the
	// pruning does not depend on the verifier's heuristics.
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kdiff_probe", Type: ebpf.SocketFilter,
		Instructions: kinsns, License: "GPL", Flags: bpfFTestStateFreq})
	if err != nil {
		return false, fmt.Errorf("fetch precision probe: %w", err)
	}
	defer prog.Close()
	ret, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, packetSize)})
	if err != nil {
		return false, fmt.Errorf("fetch precision probe: BPF_PROG_TEST_RUN: %w", err)
	}
	switch ret {
	case 1:
		return true, nil
	case 2:
		return false, nil
	}
	return false, fmt.Errorf("fetch precision probe: returned %d, want 1 or 2", ret)
}

// fetchProbe is FetchPrecisionBug's program. It reads skb->len (a
// __sk_buff starts with len) from its context.
func fetchProbe() []asm.Instruction {
	return []asm.Instruction{
		{Opcode: asm.ClassLDX | asm.ModeMEM | asm.SizeW, Dst: 2, Src: 1}, // r2 = skb->len
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 3, Imm: 0},
		{Opcode: asm.ClassJMP | asm.JmpJNE, Dst: 2, Offset: 1},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 3, Imm: 1},
		{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: regFP, Src: 3, Offset: -8},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 4, Imm: 0},
		{Opcode: asm.ClassSTX | asm.ModeATOMIC | asm.SizeDW, Dst: regFP, Src: 4, Offset: -8, Imm: asm.AtomicADD | asm.AtomicFetch},
		{Opcode: asm.ClassJMP | asm.JmpJEQ, Dst: 4, Imm: 1, Offset: 2},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 0, Imm: 2},
		{Opcode: asm.OpExit},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 0, Imm: 1},
		{Opcode: asm.OpExit},
	}
}

// ReasonTooComplex is the RefusedError.Reason of a program that reached
// the verifier's complexity limit (a million instructions processed).
const ReasonTooComplex = "too complex for the verifier (E2BIG)"

// RefusedError is the kernel refusing a generated program: a bug of the
// generator, since programs are meant to be valid by construction.
type RefusedError struct {
	Seed uint64
	// Reason is the verifier's last message.
	Reason string
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("seed %d: the kernel refused the program: %s", e.Seed, e.Reason)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// RunKernel loads p (and its tail-call targets, into a new program
// array) into the kernel as socket filters and runs it once with
// BPF_PROG_TEST_RUN, starting from p.Value. A *RefusedError means the
// verifier refused p or a target.
func (t *Target) RunKernel(p *Program) (Outcome, error) {
	if t.kernel == nil {
		return Outcome{}, fmt.Errorf("seed %d: target has no kernel map", p.Seed)
	}
	progArray, err := ebpf.NewMap(&ebpf.MapSpec{Name: "kdiff_tails", Type: ebpf.ProgramArray, KeySize: 4,
		ValueSize: 4, MaxEntries: ProgArraySlots})
	if err != nil {
		return Outcome{}, fmt.Errorf("seed %d: creating the program array: %w", p.Seed, err)
	}
	defer progArray.Close()
	for i, tail := range p.Tails {
		prog, err := t.kernel.load(p.Seed, fmt.Sprintf("tail %d", i), tail, progArray)
		if err != nil {
			return Outcome{}, err
		}
		err = progArray.Put(uint32(i), prog)
		prog.Close() // the array holds it
		if err != nil {
			return Outcome{}, fmt.Errorf("seed %d: tail %d: %w", p.Seed, i, err)
		}
	}
	prog, err := t.kernel.load(p.Seed, "main", p.Insns, progArray)
	if err != nil {
		return Outcome{}, err
	}
	defer prog.Close()
	copy(t.mem, p.Value)
	retval, err := prog.Run(&ebpf.RunOptions{Data: p.Packet})
	if err != nil {
		return Outcome{}, fmt.Errorf("seed %d: BPF_PROG_TEST_RUN: %w", p.Seed, err)
	}
	return Outcome{Engine: EngineKernel, R0: uint64(retval), R0Bits: 32,
		Value: append([]byte(nil), t.mem...)}, nil
}

// load loads one program of a generated family.
func (k *kernelSide) load(seed uint64, what string, in []asm.Instruction, progArray *ebpf.Map) (*ebpf.Program, error) {
	insns, err := k.instructions(in, progArray)
	if err != nil {
		return nil, fmt.Errorf("seed %d: %s: %w", seed, what, err)
	}
	spec := &ebpf.ProgramSpec{Name: "kdiff", Type: ebpf.SocketFilter, Instructions: insns, License: "GPL"}
	// Without a log first: cilium/ebpf would otherwise retry a refused
	// program with growing log buffers, which for a program that hits the
	// complexity limit means verifying a million instructions again and
	// again. The log is fetched only for other refusals.
	prog, err := ebpf.NewProgramWithOptions(spec, ebpf.ProgramOptions{LogDisabled: true})
	if errors.Is(err, unix.E2BIG) {
		return nil, &RefusedError{Seed: seed, Reason: ReasonTooComplex, Err: err}
	}
	if err != nil {
		prog, err = ebpf.NewProgram(spec)
		if err == nil {
			prog.Close()
			return nil, fmt.Errorf("seed %d: %s: the kernel refused the program once, then loaded it", seed, what)
		}
		return nil, &RefusedError{Seed: seed, Reason: what + ": " + verifierReason(err), Err: err}
	}
	return prog, nil
}

// instructions converts uebpf instructions to cilium/ebpf's, pointing
// every map lddw at the kernel map it names.
func (k *kernelSide) instructions(in []asm.Instruction, progArray *ebpf.Map) (ciliumasm.Instructions, error) {
	code := asm.Encode(nil, in)
	insns, err := ciliumasm.AppendInstructions(nil, bytes.NewReader(code), binary.LittleEndian, "linux")
	if err != nil {
		return nil, fmt.Errorf("decoding for cilium/ebpf: %w", err)
	}
	for i := range insns {
		if !insns[i].IsLoadFromMap() {
			continue
		}
		var m *ebpf.Map
		switch idx := uint32(insns[i].Constant); {
		case idx == MapIndex:
			m = k.m
		case idx == ProgArrayIndex && progArray != nil:
			m = progArray
		default:
			return nil, fmt.Errorf("instruction %d: map index %d: %w", i, idx, maps.ErrInvalid)
		}
		if err := insns[i].AssociateMap(m); err != nil {
			return nil, fmt.Errorf("instruction %d: %w", i, err)
		}
	}
	return insns, nil
}

// verifierReason picks the verifier's own message out of its log: the
// last line before the statistics.
func verifierReason(err error) string {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	for i := len(ve.Log) - 1; i >= 0; i-- {
		line := strings.TrimSpace(ve.Log[i])
		if line == "" || strings.HasPrefix(line, "processed ") || strings.HasPrefix(line, "verification time") ||
			strings.HasPrefix(line, "stack depth") {
			continue
		}
		return line
	}
	return err.Error()
}
