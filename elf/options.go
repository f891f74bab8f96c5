package elf

import (
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/maps"
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
	// Timeout is the wall-clock limit of a run (vm.DefaultTimeout if 0;
	// negative: none).
	Timeout time.Duration
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
	// MapReplacements gives maps to use instead of creating them, by the
	// object's map name (section name for global data: ".data", ".bss",
	// ".rodata" ...): for example kernel maps opened through package
	// kbridge, so that VM programs share them with kernel programs. Each
	// must match the object's definition (type, key and value size,
	// entries) or loading fails with ErrMapReplacement. A nil value marks a
	// map as kernel-only: programs loaded into the VM that use it fail
	// with ErrKernelOnlyMap.
	//
	// Replacements keep their contents: the object's initial contents and
	// variable values are not written into them (the creator of the
	// replacement is expected to have done it, as cilium/ebpf does when it
	// creates the map from the same spec), and Options.Variables may not
	// name a variable of a replaced section. The collection does not own
	// replacements: Close leaves them open.
	MapReplacements map[string]maps.Map
	// MaxMapMemory bounds the bytes the maps of the collection may take
	// together, computed from their declarations (key and value sizes
	// times max_entries, per-CPU values once per possible CPU, a ring
	// buffer's size), since maps are allocated up front and an object
	// may declare gigabytes: over it, loading fails with ErrMapTooLarge
	// naming the map that crosses it. Replaced maps do not count. Load
	// and LoadReader also refuse, before parsing, SHT_NOBITS sections
	// over it (and over MaxGlobalData in any case). 0 means
	// DefaultMaxMapMemory (1 GiB); a negative value (NoMapMemoryLimit)
	// none.
	MaxMapMemory int64
}
