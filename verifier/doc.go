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
// number, zero) with whole registers spilled by aligned 8-byte stores. A
// stack pointer with a variable offset bounded to the frame may be used:
// a load needs every byte of its range initialised, a store makes every
// byte of it a number.
//
// Each instruction is checked (check_alu.go, check_mem.go, check_jmp.go,
// check_call.go): reads of uninitialised registers and stack; every load
// and store in bounds of its region (proven ranges of offsets: the
// context, whose bytes are plain memory, the stack, map values and
// helper memory); null checks
// before dereferencing; only 64-bit pointer ± number arithmetic; no
// pointer turned into a number, stored into memory other than the stack,
// compared or returned unless Options.AllowPointerLeaks; helper calls
// against their vm.Prototype; references released on every path; calls
// no deeper than vm.MaxCallDepth frames, callee stacks not escaping.
//
// Conditional jumps on numbers are decided when the ranges allow it and
// otherwise narrow the ranges on both branches; a 32-bit unsigned or
// equality comparison of numbers wider than 32 bits narrows their low 32
// bits (through the tnum). Null checks turn every copy of a value-or-null
// pointer (linked by id) into a pointer or 0. A lookup in an array map
// with a constant key below max_entries cannot fail and returns a map
// value, not a value-or-null (as Linux's can_elide_value_nullness).
//
// bpf_loop (check_call.go) forks: the helper may return at once, or call
// the callback, whose frame (r1 = index in [0, 1<<23), r2 = the helper's
// third argument) the path enters. Each return from the callback, which
// must be 0 or 1 and hold the references it was entered with, continues
// in the caller and also enters the callback again, numbers the callback
// changed in the callers' stacks forgotten (widened), unless a state at
// the callback's entry, explored or on the path, covers it. Equal states
// in a later call of a callback prune instead of reporting a loop:
// bpf_loop bounds the calls.
//
// Loops are explored like any other path. At pruning points (prune.go)
// the state is compared with the states stored there: if one whose every
// path has been explored to the end subsumes it, the path is pruned; if
// one still being explored on the same path equals it, the program may
// loop forever and is refused. In the current frame, only live registers
// count, and of live numbers whose value can never reach a check (an
// address, a helper or call argument, a comparison, a store, a callee's
// return value) only the type: liveness.go computes both sets statically,
// a coarser form of Linux's liveness and precision tracking. A
// complexity limit on the instructions processed bounds the work and
// reports "program too complex".
//
// Long loops get invariants (loops.go). Loop heads are the targets of
// back edges in the dominator sense, with their natural loops. The exact
// exploration pauses when a head is reached 64 times on one path (since
// the path entered the loop); the program is then verified again with
// widening: from the third arrival at a head on a path, the state is
// joined with the previous arrival's and every number whose bounds moved
// is widened, in the direction it moved, to thresholds (the constants of
// the program's jumps, moves and masks, ±1, then the 32- and 64-bit
// limits and one short of them, then the extremes). An arrival the
// widened state subsumes is a fixpoint and is pruned; one it does not
// subsume is widened again. If widening fails, the exact exploration
// resumes where it paused, so no program it accepts is refused.
//
// A widened loop must also terminate: some register must strictly
// increase (or decrease) as an unsigned 64- or 32-bit number, without
// wrapping, on every path from the widened head back to it (a ranking
// function). Registers carry tags relating them to their value at the
// widened head (mov copies them, adding or subtracting a constant moves
// their delta, other writes drop them); each arrival keeps the candidates
// whose delta moved the right way with a range that excludes a wrap, and
// tracks the range and smallest step of each, which bound the iterations
// per entry by Options.MaxLoopIterations. No candidate left is
// ErrInfiniteLoop ("no value moves towards an exit"); a loop that may
// run too often is ErrTooComplex. States with tags prune only states
// whose tags they carry, and compare tagged registers exactly, so a path
// pruned inside a widened loop has been checked against the same loop.
//
// Options.LoopsBoundedByBudget drops the termination proof, not the
// safety proof: a widened loop with no ranking candidate, or one that may
// run more than MaxLoopIterations times, is accepted and counted in
// Result.LoopsUnproven. Only the run's instruction budget ends such a
// loop. Loops that return to the same state are refused either way.
//
// Some loops end because a counter reaches another register's value,
// which ranges cannot show. The state also keeps relations between
// registers of a frame (relations.go): a < b and a <= b from comparisons
// of two registers and from moves, carried through adding constants that
// cannot wrap, and "a holds b % c" after a copy of b is divided by c, so
// that a non-zero remainder means b != c. Learning one narrows both
// ranges; widening keeps the relations both joined states satisfy, and a
// stored state prunes only states that satisfy its relations. The
// benchmark set's prime, whose inner loop
// (for d = 2; d * d <= i; d++) if (i % d == 0) break;
// ends because d reaches i at the latest, is proved this way: d <= i is
// the invariant, i % d != 0 makes it d < i, so d + 1 cannot wrap.
//
// Errors are *Error values naming the rule broken (a sentinel such as
// ErrOutOfBounds, for errors.Is), the instruction and its disassembly,
// the source line when Options.LineInfo is set, and the abstract state.
// Options.Log receives a kernel-style log of every instruction processed.
//
// Options for realistic programs: ContextSize is the size of the type the
// program's parameter points to (elf.Program.ContextSize from BTF, or the
// embedder's context struct), ContextReadOnly when the embedder does not
// let programs write it.
//
// Not yet implemented: callbacks of helpers other than bpf_loop, full
// 32-bit sub-register ranges (signed 32-bit comparisons of wider numbers
// only fork), precision tracking by backtracking (relevance is static),
// stack liveness, copies of numbers sharing bounds learned from
// comparisons, packet pointers, relations other than those above (a
// difference of two registers counting down to 0 ranks nothing; spilled
// registers keep no relations), ranking functions on spilled stack slots
// or pointer offsets.
//
// Tests: a negative suite of hand-written unsafe programs in 13
// categories (negative_test.go), positives, a corpus of clang -O2
// programs (testdata/corpus, rebuilt by go generate) plus the examples
// and the benchmark set (corpus_test.go), agreement with the Linux
// verifier as root (kernel_test.go), a soundness fuzzer (fuzz_test.go) and
// benchmarks against Linux (bench_test.go).
package verifier
