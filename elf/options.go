package elf

import (
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/vm"
)

// Options tune NewCollection. The zero value loads userspace programs with
// no helpers.
type Options struct {
	// Helpers the programs may call, by Linux helper number. A program
	// calling a helper that is not in the set fails to load
	// (vm.ErrHelperMissing). Package helpers provides the standard set.
	Helpers vm.Helpers
	// Budget is the default instruction budget of a run (vm.DefaultBudget
	// if 0).
	Budget uint64
	// TargetBTF holds the types CO-RE relocations are resolved against:
	// the application's context types. Needed only when a program has
	// CO-RE relocations.
	TargetBTF *btf.Spec
	// DeferCOREErrors loads programs with CO-RE relocations the target
	// cannot satisfy, as the kernel does when such an instruction is
	// unreachable (guarded by bpf_core_field_exists, say): a run that
	// reaches one ends with an error wrapping ErrCORE that names the
	// program and the relocation. By default they fail to load.
	DeferCOREErrors bool
	// AllPrograms loads every program into the VM, kernel sections
	// included. Kernel programs are still listed in KernelSpec.
	AllPrograms bool
	// Variables sets global variables before the programs are loaded, by
	// name: fixed-size Go values (encoding/binary, native byte order) or
	// []byte of the variable's size. They override values set on the spec.
	Variables map[string]any
}
