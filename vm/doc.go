// Package vm defines the uebpf program model and runs programs in an
// interpreter.
//
// A program starts as raw eBPF bytecode (8-byte little-endian slots), as
// cilium/ebpf asm.Instructions, or as a ProgramSpec built by a higher layer
// (the ELF loader, the filter compiler). Load validates its structure — known
// opcodes, valid registers, jump and call targets inside the program, complete
// lddw pairs, no fall-through off the end, no writes to r10 — and pre-decodes
// it for the interpreter. A loaded Program is immutable and may run from many
// goroutines at once.
//
// The execution ABI is the kernel's: r1..r5 carry arguments (r1 is the context
// pointer), r0 holds the result, r10 is the read-only frame pointer with 512
// bytes of stack per frame and up to 8 frames of bpf-to-bpf calls.
//
// Pointers are real host addresses. Memory a program may touch is a set of
// regions (its context, its stack, global data, memory helpers return and
// memory the embedder registers on the Env). In checked mode every load and
// store is checked against those regions and a violation ends the run with a
// *RunError naming the pc and address. Every run also has an instruction
// budget. The interpreter always runs in checked mode: Load does not
// verify, so any program it loads is memory-safe for the host. To run
// without the checks, prove the program safe with verifier.Verify and
// compile it with the proof (jit.Options.Verified); package uebpf does
// both for every program it loads.
//
// Helpers are Go functions registered by number (HelperFunc); they see the
// run through *Env, which lets them translate program addresses into Go
// memory safely, register memory they hand back, stop the run or make a tail
// call.
//
// What only engines use (the layout of an Env that generated code reads,
// the operations of a run the JIT makes) is not API: it is in
// internal/engine, which this package provides.
package vm

//go:generate go run ./internal/geninterp -o interp.go -copies interp_copies_amd64.go
