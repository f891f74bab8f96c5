// Package uebpf runs eBPF programs inside a Go process.
//
// Programs are written in C, compiled with clang (-target bpf) and loaded
// from their object file with LoadFile or Load. Programs whose ELF section
// is "uebpf" or starts with "uebpf/" are loaded into the uebpf VM; programs
// of kernel sections (tracepoint/..., xdp, ...) are kept, with the maps, in
// Collection.KernelSpec for the kernel bridge.
//
//	coll, err := uebpf.LoadFile("filter.bpf.o", nil)
//	...
//	defer coll.Close()
//	verdict, err := coll.Program("filter").Run(eventBytes)
//	coll.Map("counts").Lookup(key, &count)
//
// Programs call the standard helpers of package helpers (Linux numbers and
// semantics), or the set given in Options.Helpers: the standard set with
// application helpers added by helpers.Register, as for vm.Load.
// Maps are package maps' userspace maps, reachable by name; global variables
// are set with Options.Variables before loading, or through
// Collection.Variables afterwards (.data and .bss).
//
// # Engines
//
// Options.Engine picks the engine: EngineAuto (the default) uses the JIT
// (package jit: native code on linux/amd64 and linux/arm64) where it is available and the
// interpreter elsewhere; EngineInterpreter and EngineJIT force one. Both
// give the same results, and every run is bounded by an instruction
// budget.
//
// # Safety
//
// Safety depends on the package a program is loaded through:
//
//   - uebpf (this package): every program is verified at load, and runs
//     unchecked on the JIT only because it was; SkipVerification is the
//     explicit way to checked mode.
//   - vm: vm.Load checks the program's structure, never its memory
//     accesses; the interpreter checks every access at run time (checked
//     mode), so any loaded program is memory-safe for the host.
//   - verifier: verifier.Verify proves a vm.Program safe and returns the
//     proof, a *verifier.Result.
//   - jit: checked code by default, like the interpreter; unchecked code
//     with jit.Options.Verified set to the proof (runs then refuse a
//     context shorter than the proof's), or with jit.Options.Unchecked
//     for programs trusted without one.
//
// Every program is verified at load (package verifier) for a context of
// Options.ContextSize bytes, by default the size of the type its parameter
// points to in BTF; a program the verifier refuses fails to load, and runs
// with a shorter context are refused (ErrShortContext). Verified programs
// run on the JIT without run-time memory checks. Options.SkipVerification
// loads programs unverified, in checked mode: every memory access is
// checked at run time instead.
package uebpf
