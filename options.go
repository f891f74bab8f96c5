package uebpf

import (
	"io"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/vm"
)

// Engine selects how programs run.
type Engine int

const (
	// EngineAuto, the default, uses the JIT where it has a backend and
	// the interpreter elsewhere, or for a program the JIT cannot compile:
	// verified programs are the common case, and the JIT runs them an
	// order of magnitude faster.
	EngineAuto Engine = iota
	// EngineInterpreter runs programs in vm's interpreter, on every
	// platform.
	EngineInterpreter
	// EngineJIT compiles programs to native code with package jit. Loading
	// fails where the JIT has no backend (linux/amd64 and linux/arm64 have one).
	EngineJIT
)

func (e Engine) String() string {
	switch e {
	case EngineInterpreter:
		return "interpreter"
	case EngineJIT:
		return "jit"
	case EngineAuto:
		return "auto"
	}
	return "Engine(?)"
}

// Options tune loading. The zero value (or nil) loads the userspace
// programs with the standard helpers, verified, on the JIT where it
// exists (EngineAuto).
type Options struct {
	// Helpers are the helpers programs may call (default: the standard
	// set, helpers.Standard). Add application helpers the way vm.Load
	// takes them: to a set from helpers.Standard, with helpers.Register.
	// The set is copied, not modified.
	Helpers vm.Helpers
	// TraceOutput receives bpf_trace_printk output of the standard helpers
	// when Helpers is nil (default: discarded); a set of your own says
	// where in helpers.Config.
	TraceOutput io.Writer
	// Budget is the instruction budget of a run (vm.DefaultBudget if 0):
	// one unit per instruction, and what helpers charge for their work
	// (see vm.Env.Charge).
	Budget uint64
	// Timeout is the wall-clock limit of a run (vm.DefaultTimeout, one
	// second, if 0; a negative value: none). A run past it ends with a
	// *vm.RunError wrapping vm.ErrTimeout. RunContext adds a context's
	// cancellation and deadline.
	Timeout time.Duration
	// MaxMapMemory bounds the memory the maps of one object may take, as
	// their declarations say (elf.Options.MaxMapMemory: 0 is
	// elf.DefaultMaxMapMemory, a negative value no limit). An object over
	// it fails to load with an error wrapping elf.ErrMapTooLarge.
	MaxMapMemory int64
	// Engine runs the programs (default EngineAuto).
	Engine Engine
	// TargetBTF holds the application's types that CO-RE relocations are
	// resolved against.
	TargetBTF *btf.Spec
	// DeferCOREErrors loads programs whose CO-RE relocations the target
	// cannot satisfy; a run reaching such an instruction fails (see
	// elf.Options.DeferCOREErrors). By default they fail to load.
	DeferCOREErrors bool
	// AllPrograms loads every program into the VM, kernel sections too.
	AllPrograms bool
	// Kernel loads a mixed object: its kernel programs (raw_tp/...,
	// tracepoint/..., kprobe/...) and all its maps go to the kernel
	// through cilium/ebpf, and its userspace programs into the VM, bound to
	// the same kernel maps (arrays and global data mmapped). Attach the
	// kernel programs with Collection.AttachKernel. Needs root (or CAP_BPF
	// and CAP_PERFMON); see kernel.go.
	Kernel bool
	// KernelOptions tune cilium/ebpf's loading of the kernel side.
	KernelOptions *ebpf.CollectionOptions
	// Variables sets global variables before the programs load, by name.
	// It is the only way to set constants (const volatile, .rodata).
	Variables map[string]any
	// SkipVerification loads programs without running the verifier. They
	// then run in checked mode: every memory access is checked at run time
	// and a bad one ends the run with a *vm.RunError. By default every
	// program is verified at load: one the verifier refuses fails to load
	// with a *verifier.Error, and the ones it accepts run on the JIT
	// without run-time memory checks (the interpreter keeps its checks).
	SkipVerification bool
	// LoopsBoundedByBudget accepts loops the verifier proves memory-safe
	// but cannot prove to terminate (see
	// verifier.Options.LoopsBoundedByBudget): such programs still run
	// without run-time memory checks, and only the run's instruction
	// budget (Options.Budget) ends a loop that does not. By default
	// they are refused.
	LoopsBoundedByBudget bool
	// ContextSize is the size of the programs' context, as the verifier
	// assumes it; runs then need a context at least that long. By default
	// it is the size of the type each program's parameter points to in the
	// object's BTF (16 for "int prog(struct event *e)" with a 16-byte
	// struct event), or 0 (a program may not read its context) when the
	// parameter is void * or the object has no BTF.
	ContextSize int
	// VerifierLog, if set, receives the verifier's full log, instruction by
	// instruction with the register state, as the kernel's log level 2.
	VerifierLog io.Writer
}
