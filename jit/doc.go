// Package jit compiles vm programs to x86-64 or arm64 machine code and
// runs them from Go without cgo.
//
//	vp, _ := vm.Load(spec, &vm.Options{Helpers: hs})
//	p, err := jit.Compile(vp, nil) // checked mode
//	defer p.Close()
//	r0, err := p.Run(ctx)          // or p.Exec(env), as with vm.Program
//
// Results and errors are those of the interpreter, instruction for
// instruction: the same r0, the same memory effects, the same *vm.RunError
// (pc, address, size, vm.ErrMemoryAccess, vm.ErrMisaligned,
// vm.ErrBudgetExceeded, vm.ErrCallDepth, vm.ErrUnknownHelper...). Tests
// check this with the conformance suite, per-instruction-class tables and
// a differential fuzzer. Compile returns ErrUnsupportedArch on platforms
// other than linux/amd64 and linux/arm64; the package builds everywhere.
//
// # Layout
//
// This package holds the API, the shared compile (compile_linux.go: the
// back end of GOARCH compiles, this package maps the code and fills the
// Program), the Go side of runs and the assembly trampolines. The back
// ends are packages of their own behind one seam, jit/internal/backend (a
// struct of functions, Arch, with what a back end is given and returns
// and the run state's layout): internal/backend/amd64 and
// internal/backend/arm64, each with its encoder (internal/x86,
// internal/arm64) and its options (Options.AMD64, Options.ARM64). Both
// read the architecture-neutral analyses of internal/frontend. What
// follows describes the amd64 back end; the arm64 one follows the same run
// protocol with the inline map paths and hoisted loop checks, but not the
// other optimisations (jump tables, copy idioms, lean runs).
//
// # Code generation
//
// Our own encoders (internal/x86) emit the code in one pass over the
// program, with forward jumps patched at the end and slow paths placed out
// of line after the body. Compile time matters (BenchmarkCompile): an
// instruction is built in a 64-bit word and stored into spare capacity of
// one buffer, nothing is allocated per instruction, and the stubs every
// program starts with are emitted once per kind and copied. eBPF registers live in x86 registers (r0 rax,
// r1 rdi, r2 rsi, r3 r8, r4 r9, r5 r10, r6 rbx, r7 r13, r8 r14, r9 r15,
// r10 rbp); rcx and r11 are scratch, rdx holds the instruction budget and
// r12 the run state. Division branches around x86's traps (divisor 0,
// INT_MIN/-1) to give the ISA's results; unsigned division by a constant
// is a shift or mask (powers of two) or a multiplication by the
// reciprocal (Hacker's Delight 10-9; 64-bit divisors that need a 65-bit
// multiplier keep div); shifts use SHLX/SHRX/SARX when
// the CPU has BMI2 and cl otherwise (rcx is scratch, so no juggling);
// packet loads use MOVBE when available; atomics are LOCK-prefixed
// instructions, with CMPXCHG loops for fetch-and/or/xor. CPU features come
// from klauspost/cpuid and can be turned off in Options.
//
// Machine code lives in executable memory from jit/internal/execmem: on
// amd64, slots of a memory file mapped read-execute and written with
// pwrite, so no page is ever writable and executable (W^X) and a compile
// costs no mprotect (and its TLB shootdown); on arm64, pages of its own,
// filled read-write and flipped to read-execute. It is freed by Close or,
// for a program that is never closed, by a cleanup when the Program is
// garbage collected.
// Options.Blind XORs every immediate with a per-program random key.
//
// # Entering generated code
//
// Program.Direct is the cheapest entry, for code that needs nothing from a
// run but r1 and cannot fail but for its budget (amd64; stackless, no
// local calls, helpers or packet, no checked memory accesses: filters,
// and loops that store nothing), or that stores nothing at all and checks
// its reads (the stub then gives it the context as its only region, and
// a failed check continues in Go, directFallback, which runs it again
// with an Env for the error): a Go func value whose code pointer is a
// stub in the program's code. Go calls it like any func, with the context
// slice in rax, rbx and rcx; the stub sets r1, the budget and a spill
// slot for it, and for flat code either falls (or jumps) into the body,
// whose return then goes straight back to Go (code that never names r6,
// r8 or r9, so rbx is still the nil error's 0 and r14 still g), or calls
// it, saving r14 and r15. Code with loops gets one slice of its budget,
// and a run that needs more continues in Go (directFallback): its leaves
// find the run state the entry put at a fixed distance below the stack
// pointer and go there instead of returning.
// Nothing between Go and the code: about 4 ns per call against 7 for Run
// (BENCHMARKS.md). The func value's closure holds the Program, so the code
// lives as long as the func; Close points the func at closedRun.
//
// The start stub sets up only the registers a program may read before
// writing them (r0 always): all but those its first block writes before
// reading them up to its first jump or call, and when that stretch ends
// with an exit (nothing else runs) only what it reads first. A program
// with helper calls gets all of them (helpers and tail-call targets read
// them). Checked code that never accesses memory needs no hot regions
// and, on runFrame, no region list.
//
// Exec keeps the run state (registers while Go has control, budget, the
// hot regions, exit reason and address) in the Env's engine space
// (engine.Env.Scratch, package internal/engine: the contract between the
// engines and vm); generated code reads the arguments, stack, regions and
// packet from the Env at engine.*Offset from the state. A Go-assembly
// trampoline, enter, declared NOSPLIT with a fixed frame, points the stack
// pointer at the top of that frame and calls the program: the frame is the
// native stack of generated code (return addresses and saved r6-r9 of
// bpf-to-bpf calls, at most 7 deep). The linker's NOSPLIT analysis
// guarantees the goroutine stack has room for the frame, so generated code
// never grows it.
//
// Generated code cannot be preempted by Go, so code that can run long (a
// backward jump or a local call) gets its budget one slice at a time: when
// a slice runs out it returns to Go, which checks the run's time limit and
// context (where the goroutine also stops for the scheduler and the
// garbage collector) and resumes it with the next slice. Slices adapt to
// take about 100 µs each.
//
// A lean program (one that calls no helper, cannot run long, and in
// checked mode has no static regions) needs nothing of an Env but its
// arguments, stack and context region: Exec skips engine.BeginRun and
// EndRun for it, and Run and RunPointer use no Env at all. They call
// run, in assembly (so that Program.Run inlines into its callers and a
// run is one call from Go),
// which continues where Program.path says: runFrame, whose frame holds
// copies of the Env fields generated code reads, the state, a one-entry
// region list (the context) and the 4 KiB eBPF stack, and which sets up
// only what the code reads (checks, packet, the registers it
// may read before writing them); runFramePlain, the same with nothing to
// set up, for code that is also flat (every exit at the base of its
// native stack); or runEnv, for any other program. The root package's
// Program.Run jumps straight to runRoot (runFramePlain with its
// arguments) or runRootStackless, whose frame has no eBPF stack (for code
// that never names r10) and is small enough for NOSPLIT. The frame
// entries call the body where their stack pointer is: the native stack
// (at most 336 bytes) is below the frame, in the room that the stack
// check of a prologue leaves for NOSPLIT callees (StackLimit, 800 bytes).
// The large ones are not NOSPLIT: their prologue grows the goroutine
// stack before generated code runs. Their errors are built by Go code
// they call, so they never write the stack pointer themselves, and the
// runtime can unwind through them. Nothing on the frame outlives the run:
// a stack address a program stored is a number afterwards, which checked
// code cannot use (as with an Env's stack, which the next run reuses).
//
// Generated code is not Go code: the scheduler cannot preempt it (Go's
// async preemption signal finds no safe point there and retries later),
// and garbage collection waits for it at stop-the-world phases. The
// instruction budget therefore bounds how long a run can hold a thread.
// Generated code holds no Go pointers the GC must see: the state and the
// trampolines' frames contain only integers, and memory handed to the
// program is kept alive by the Env (its regions), the caller (Run's
// context) and the Program.
//
// # Helper calls
//
// A helper call returns to Go: generated code stores its registers in the
// state, records the resume address, and returns to the trampoline; Exec
// calls the vm.HelperFunc, applies what the helper asked for through the
// Env (Stop, Fail, TailCall) and re-enters at the resume address. When the
// call happens inside bpf-to-bpf calls, the live part of the native stack
// is copied to a save area first, since the trampoline's frame does not
// survive the return to Go. Tail calls compile the target on first use
// (with the same options) and continue in its code with the registers and
// call depth as they are; targets live and die with the program that
// compiled them.
//
// Calls of an ArrayLookup helper (bpf_map_lookup_elem) are answered in
// generated code, as the interpreter answers them: when r1 is a map
// pointer (checked against the program's map table: in range, on an
// entry) to an array and the 4-byte key at r2 is readable (in checked
// mode: the stack inline, then the region of the last read and the region
// list out of line), r0 = the element's address or 0 past the end, from a
// table of the arrays emitted after the code. When lddw r1, map precedes
// the call in its block (so r1 is known), the code indexes that array with
// its constants and nothing else. Anything else takes the helper exit. The
// inline answer, like the interpreter's, does not end the budget's
// stretch (the helper exit, out of line, charges it and gives the slots
// back after the helper). The hit is the inline path; the miss and the
// helper exit are out of line, and a null test of r0 right after the call
// (which the verifier demands) is answered with the lookup: the hit path
// knows r0 is not 0, the miss path that it is.
//
// Calls of a HashUpdate helper (bpf_map_update_elem) that give an
// existing key of a preallocated hash or LRU hash map of package maps a
// new value are answered in generated code too (amd64: compile_hash.go), with
// the recipe engine.HashLayout describes and package maps fills: hash the key, take the key's
// stripe lock, probe for the key, copy the value, mark an LRU element
// used, release. The map must be known at compile time (lddw r1 in the
// call's block); in checked mode the key and the value must be in the
// current frame. A missing key, other flags, a busy lock or an unbounded
// probe take the helper exit right after, which Go answers as the
// interpreter does. The call charges the budget before either path.
//
// # What the compiler knows in a block
//
// Inside a block (straight-line code with one entry; see Budget), the
// compiler follows which registers hold r10 plus a constant and which
// stack slots hold a register's value, stored in the block and unchanged
// since. Accesses through such a register inside the frame need no check
// (as r10's), a load of such a slot is a register move (a spilled
// register read back; the key of an inline lookup, stored just before the
// call), and "mov rX, rY; add rX, imm" is one lea. Any store that is not
// through a known frame pointer, any atomic and any call forgets the
// slots.
//
// # Checked and unchecked code
//
// In checked mode (the default) every load, store and atomic is checked
// in generated code: accesses through r10 inside the current frame need no
// check; other r10 accesses are checked against the stack inline; all
// other accesses against the region that allowed the last access of the
// same kind (read or write), cached in the state. What fails the inline
// check goes out of line to a check of the stack and a walk of the run's
// region list (the same list the interpreter uses); a violation ends the
// run with a *vm.RunError naming the pc and address. The out-of-line part
// of an access is three instructions (record the pc, call the slow path
// shared by all accesses of its size and kind, jump back).
// Options.Verified drops the checks of a program verifier.Verify proved
// safe, given its proof (the *verifier.Result), and makes its runs refuse
// shorter contexts than the proof assumed; Options.Unchecked drops them
// without a proof, for programs verified elsewhere.
//
// Counted loops are compiled twice (compile_hoist.go of both back ends): as above, and
// without the checks of the accesses whose addresses are a counter plus
// registers the loop does not change (or such registers alone). A guard
// where the loop is entered works out, from the counter's value at entry,
// its step and the bound of the exit test every iteration runs, the span
// of addresses each such access can reach, and runs the unchecked copy
// when a region (or the stack) allows every span; otherwise the checked
// copy runs and faults where the interpreter does. A byte copy and a
// string comparison run as fast checked as unchecked this way.
//
// # Budget
//
// The budget is charged exactly as the interpreter charges it, so that
// both engines stop at the same instruction: the interpreter charges the
// length of each straight-line stretch at the taken jump, call, exit or
// packet load that ends it. Generated code subtracts a stretch's length
// from rdx at those instructions and branches on the sign the subtraction
// sets (one subtraction and one not-taken branch per stretch; a block that
// falls through into a jump target subtracts at its end). A conditional
// jump taken with an overdrawn budget fails; not taken, it continues, as
// in the interpreter. An unconditional jump is a single jns to its target.
// A conditional jump out of a loop (forward, past a backward jump that
// comes back above it) is usually not taken: it charges only on its taken
// path, out of line, and its fall-through path continues the stretch with
// no subtraction and no test. Blocks start only at jump targets and after
// instructions that always end a stretch, so a conditional jump does not
// end the compiler's knowledge of the block either.
package jit
