package kerneldiff

import (
	"errors"
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Engine names, in the order Target runs them.
const (
	EngineKernel       = "kernel"
	EngineInterpreter  = "interpreter"
	EngineJIT          = "jit"
	EngineJITUnchecked = "jit-unchecked"
	// EngineJITPortable is the checked JIT with constant blinding and
	// without BMI2 and MOVBE: the other code paths of shifts, byte swaps
	// and immediates.
	EngineJITPortable = "jit-blind-nobmi2"
)

// Outcome is what one engine did with a program.
type Outcome struct {
	Engine string
	// R0 is the program's return value: all 64 bits from uebpf's engines,
	// the low 32 (a socket filter's retval) from the kernel.
	R0     uint64
	R0Bits int
	// Value is the map element after the run.
	Value []byte
	Err   error
}

// contextSize is the size of the context uebpf engines run programs
// with; generated programs never read it.
const contextSize = 64

// Target is the map the engines share and what runs programs on it.
type Target struct {
	// vmMap is the array generated programs' lddw instructions refer to
	// in uebpf (a kbridge.Array on the kernel map, or a maps array).
	vmMap   vm.Map
	mem     []byte // element 0 of vmMap
	helpers vm.Helpers
	closers []func() error
	kernel  *kernelSide // nil: uebpf engines only
}

// NewUserspaceTarget returns a Target with a userspace array, for
// comparing uebpf's engines where the kernel is not available.
func NewUserspaceTarget() (*Target, error) {
	m, err := maps.New(arraySpec())
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", arrayName, err)
	}
	mm, ok := m.(maps.MemoryMap)
	if !ok {
		return nil, fmt.Errorf("map %s: %T has no memory", arrayName, m)
	}
	return &Target{vmMap: m, mem: mm.Memory()[:ValueSize], helpers: helpers.Standard(nil)}, nil
}

const arrayName = "kdiff"

func arraySpec() *maps.Spec {
	return &maps.Spec{Name: arrayName, Type: maps.Array, KeySize: 4, ValueSize: ValueSize, MaxEntries: 1,
		Flags: maps.FlagMmapable}
}

// Close releases the maps.
func (t *Target) Close() error {
	var errs []error
	for i := len(t.closers) - 1; i >= 0; i-- {
		errs = append(errs, t.closers[i]())
	}
	t.closers = nil
	return errors.Join(errs...)
}

// RunUserspace runs p on the interpreter and, when jit.Supported, on the
// JIT in checked, unchecked and portable mode, with its tail-call targets
// in a new program array. Each run starts from p.Value. An error means p
// did not load or compile: a bug of the generator or of uebpf.
func (t *Target) RunUserspace(p *Program) ([]Outcome, error) {
	pa, err := maps.New(&maps.Spec{Name: "kdiff_tails", Type: maps.ProgramArray, KeySize: 4, ValueSize: 4,
		MaxEntries: ProgArraySlots})
	if err != nil {
		return nil, fmt.Errorf("seed %d: program array: %w", p.Seed, err)
	}
	progArray, ok := pa.(maps.ProgArrayMap)
	if !ok {
		return nil, fmt.Errorf("seed %d: %T is not a program array", p.Seed, pa)
	}
	// One map table for every program of the family: map pointers stay
	// valid across tail calls.
	table := []vm.Map{t.vmMap, progArray}
	load := func(what string, insns []asm.Instruction) (*vm.Program, error) {
		vp, err := vm.Load(&vm.ProgramSpec{Name: fmt.Sprintf("seed%d-%s", p.Seed, what), Instructions: insns,
			Maps: table}, &vm.Options{Helpers: t.helpers})
		if err != nil {
			return nil, fmt.Errorf("seed %d: %s: vm.Load: %w", p.Seed, what, err)
		}
		return vp, nil
	}
	for i, tail := range p.Tails {
		tp, err := load(fmt.Sprintf("tail%d", i), tail)
		if err != nil {
			return nil, err
		}
		if err := progArray.SetProgram(uint32(i), tp); err != nil {
			return nil, fmt.Errorf("seed %d: tail %d: %w", p.Seed, i, err)
		}
	}
	vp, err := load("main", p.Insns)
	if err != nil {
		return nil, err
	}
	ctx := make([]byte, contextSize)
	exec := func(run func(*vm.Env) (uint64, error)) func() (uint64, error) {
		return func() (uint64, error) {
			env := vm.NewEnv()
			env.SetContext(ctx)
			env.SetPacket(p.Packet[EthHeaderSize:])
			return run(env)
		}
	}
	outs := []Outcome{t.run(EngineInterpreter, p, exec(vp.Exec))}
	if !jit.Supported {
		return outs, nil
	}
	for _, mode := range []struct {
		name string
		opts *jit.Options
	}{
		{EngineJIT, nil},
		{EngineJITUnchecked, &jit.Options{Unchecked: true}},
		{EngineJITPortable, &jit.Options{Blind: true, AMD64: jit.AMD64Options{DisableBMI2: true, DisableMOVBE: true}}},
	} {
		jp, err := jit.Compile(vp, mode.opts)
		if err != nil {
			return nil, fmt.Errorf("seed %d: jit.Compile (%s): %w", p.Seed, mode.name, err)
		}
		outs = append(outs, t.run(mode.name, p, exec(jp.Exec)))
		if err := jp.Close(); err != nil {
			return nil, fmt.Errorf("seed %d: closing %s program: %w", p.Seed, mode.name, err)
		}
	}
	return outs, nil
}

// run resets the element to p.Value, runs, and records the element.
func (t *Target) run(engine string, p *Program, run func() (uint64, error)) Outcome {
	copy(t.mem, p.Value)
	r0, err := run()
	return Outcome{Engine: engine, R0: r0, R0Bits: 64, Value: append([]byte(nil), t.mem...), Err: err}
}
