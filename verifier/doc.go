// Package verifier proves eBPF programs safe before they run, in the
// spirit of the Linux verifier: an abstract interpretation of every path
// of the program.
//
// # Design
//
// The verifier first checks the shape of the program (cfg.go): functions
// (the entry, bpf-to-bpf call targets, callbacks) do not jump into one
// another or fall through into the next, and no instruction is
// unreachable. It marks pruning points: jump targets and the instructions
// after conditional jumps and calls.
//
// It then walks the paths depth first (verify.go), one instruction at a
// time, on an abstract state (state.go): per call frame, eleven registers
// and the stack. A register is uninitialised, a number (scalar.go: a
// tristate number, tnum.go, plus signed and unsigned 64-bit ranges), or a
// pointer: to the context, to a stack frame, to a map (a constant), to a
// map value or one that may be null, to memory a helper returned (which
// may be null, and may be a reference that must be released), or to a
// function. A pointer carries its offset as a scalar, so pointer ± number
// keeps exact bounds. The stack is tracked per byte (uninitialised,
// number, zero) with whole registers spilled by aligned 8-byte stores.
//
// Each instruction is checked (check_alu.go, check_mem.go, check_jmp.go,
// check_call.go): reads of uninitialised registers and stack; every load
// and store in bounds of its region (constant offsets for the context and
// the stack, proven ranges for map values and helper memory); null checks
// before dereferencing; only 64-bit pointer ± number arithmetic; no
// pointer turned into a number, stored into memory other than the stack,
// compared or returned unless Options.AllowPointerLeaks; helper calls
// against their vm.Prototype; references released on every path; calls
// no deeper than vm.MaxCallDepth frames, callee stacks not escaping.
//
// Conditional jumps on numbers are decided when the ranges allow it and
// otherwise narrow the ranges on both branches; null checks turn every
// copy of a value-or-null pointer (linked by id) into a pointer or 0.
//
// Loops are explored like any other path. At pruning points (prune.go)
// the state is compared with the states stored there: if one whose every
// path has been explored to the end subsumes it, the path is pruned; if
// one still being explored on the same path equals it, the program may
// loop forever and is refused. A complexity limit on the instructions
// processed bounds the work and reports "program too complex".
//
// Errors are *Error values naming the rule broken (a sentinel such as
// ErrOutOfBounds, for errors.Is), the instruction and its disassembly,
// the source line when Options.LineInfo is set, and the abstract state.
// Options.Log receives a kernel-style log of every instruction processed.
//
// Not yet implemented: callbacks (bpf_loop and other ArgFunction
// helpers are refused), 32-bit sub-register ranges, liveness and precision
// tracking (pruning compares whole states), copies of numbers sharing
// bounds learned from comparisons, variable-offset stack accesses,
// packet pointers.
package verifier
