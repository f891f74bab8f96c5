// Package elf loads eBPF object files built by clang (-target bpf) into
// programs for the uebpf VM and userspace maps.
//
// Parsing is cilium/ebpf's: LoadSpec and LoadSpecFromReader return its
// *ebpf.CollectionSpec, with bpf-to-bpf calls already linked. NewCollection
// then does what the kernel's loader (libbpf, cilium/ebpf) does before
// BPF_PROG_LOAD:
//
//   - creates a maps.Map for every map the object declares (BTF ".maps" and
//     legacy "maps" sections), keeping map_flags and pinning;
//   - turns global data sections (.rodata, .data, .bss, .rodata.*, .data.*)
//     into single-element array maps holding their initial contents, with
//     .rodata* read-only to programs (BPF_F_RDONLY_PROG);
//   - applies CO-RE relocations against a target BTF the caller supplies
//     (Options.TargetBTF: the application's context types);
//   - rewrites map references into lddw BPF_PSEUDO_MAP_FD (src 1) and
//     global-data references into lddw BPF_PSEUDO_MAP_VALUE (src 2), whose
//     immediates index one map table that every program of the collection
//     shares, and resolves bpf-to-bpf calls and callbacks (lddw
//     BPF_PSEUDO_FUNC, src 4) into pc-relative offsets;
//   - checks that every helper a program calls is provided, and that GPL-only
//     helpers are called only by programs with a GPL-compatible license;
//   - fills program arrays declared with a ".values" initialiser.
//
// # Where programs run
//
// The ELF section of a program decides where it runs. Sections "uebpf" and
// "uebpf/..." (for example "uebpf/tracepoint/<name>") are userspace programs
// and are loaded into the VM. Every other section (raw_tp/, tracepoint/, xdp,
// socket, ...) names a kernel program type: those programs are not loaded
// but kept in Collection.KernelSpec, a cilium/ebpf CollectionSpec with only
// the kernel programs and all maps, for the kernel bridge.
// Options.AllPrograms loads every program into the VM regardless of its
// section, for tests, benchmarks and tools.
//
// # Shared maps
//
// Options.MapReplacements hands the loader maps to use instead of creating
// them: kernel maps opened by package kbridge, so that the VM programs of a
// mixed object share the maps of its kernel programs (the root package's
// Options.Kernel does this). Replacements must match the object's
// definitions, keep their own contents and are not closed by Close.
//
// # Global variables
//
// Variables can be set before loading, like cilium/ebpf's: either on the
// spec (spec.Variables["threshold"].Set(uint64(5))) or with
// Options.Variables. This is the only way to set a constant (.rodata)
// variable. After loading, Collection.Variables reads and writes the
// variables of writable sections (.data, .bss) in place.
//
// # Errors
//
// Errors name the program, section or map they concern and wrap a sentinel
// (ErrUnsupportedMapType, ErrUnsupportedRelocation, ErrMissingSymbol,
// ErrGPLOnly, ErrCORE, vm.ErrHelperMissing, ...) for errors.Is.
package elf
