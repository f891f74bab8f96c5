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

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/maps"
)

// kernelSide is the kernel's half of a Target.
type kernelSide struct {
	m *ebpf.Map // owned by the kbridge.Array
}

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

// KernelConfig returns the generator configuration this kernel supports.
func KernelConfig() Config {
	return Config{V4: features.HaveV4ISA() == nil}
}

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

// RunKernel loads p into the kernel as a socket filter and runs it once
// with BPF_PROG_TEST_RUN, starting from p.Value. A *RefusedError means the
// verifier refused p.
func (t *Target) RunKernel(p *Program) (Outcome, error) {
	if t.kernel == nil {
		return Outcome{}, fmt.Errorf("seed %d: target has no kernel map", p.Seed)
	}
	insns, err := t.kernel.instructions(p.Insns)
	if err != nil {
		return Outcome{}, fmt.Errorf("seed %d: %w", p.Seed, err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kdiff", Type: ebpf.SocketFilter,
		Instructions: insns, License: "GPL"})
	if err != nil {
		return Outcome{}, &RefusedError{Seed: p.Seed, Reason: verifierReason(err), Err: err}
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

// instructions converts uebpf instructions to cilium/ebpf's, pointing
// every map lddw at the kernel map.
func (k *kernelSide) instructions(in []asm.Instruction) (ciliumasm.Instructions, error) {
	code := asm.Encode(nil, in)
	insns, err := ciliumasm.AppendInstructions(nil, bytes.NewReader(code), binary.LittleEndian, "linux")
	if err != nil {
		return nil, fmt.Errorf("decoding for cilium/ebpf: %w", err)
	}
	for i := range insns {
		if insns[i].IsLoadFromMap() {
			if idx := uint32(insns[i].Constant); idx != MapIndex {
				return nil, fmt.Errorf("instruction %d: map index %d: %w", i, idx, maps.ErrInvalid)
			}
			if err := insns[i].AssociateMap(k.m); err != nil {
				return nil, fmt.Errorf("instruction %d: %w", i, err)
			}
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
