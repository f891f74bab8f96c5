// Package kerneldiff checks uebpf's engines against the Linux kernel: it
// generates programs the kernel's verifier accepts, runs each one in the
// kernel (BPF_PROG_TEST_RUN on a socket filter, through cilium/ebpf), on
// the interpreter and on the JIT (checked, unchecked, and checked with
// constant blinding and without BMI2/MOVBE), and compares the results bit
// for bit. TestKernelAgreement does this as root; elsewhere it skips and
// TestEnginesAgree compares uebpf's engines alone.
//
// # Programs
//
// Generate(seed, cfg) is deterministic: a seed names a program, so a
// failure reproduces from its seed alone (go test -run
// TestKernelAgreement -kerneldiff.first N -kerneldiff.programs 1). Programs
// are valid by construction for the (privileged) kernel verifier: every
// register and stack byte is written before it is read, memory accesses
// use constant offsets from the frame pointer or from map value pointers,
// stack accesses are aligned, loops count a constant number of iterations
// in r8, calls go only to later functions (no recursion, every function
// called). They use ALU64 and ALU32 with every operation (sdiv, smod,
// movsx and bswap with cpu v4), shifts by immediates and registers,
// loads (sign-extending with v4) and stores of every size, atomics on the
// stack and on the map value, jmp and jmp32 conditions, if/else with ja
// (gotol with v4), bounded loops of four shapes, byte loops
// (copy, compare, find and fill over bytes to double words, as clang emits
// memcpy/strcmp/strlen/memset-style code), dense switch trees (a binary
// search on one register, which the JIT dispatches through a table), bpf-to-bpf calls (some
// passing a pointer to the caller's stack), bpf_map_lookup_elem (hit and
// miss), bpf_map_update_elem and bpf_map_delete_elem with every flag,
// lddw of constants, maps and map values, LD_ABS/LD_IND in programs
// without calls, and bpf_tail_call into up to two more generated programs
// (which tail-call again, up to the limit of 33) through a program array
// (a kernel one for the kernel, a maps one for uebpf). Loops, calls from loops and forks inside loops are
// limited so that the verifier's work stays far below its complexity
// limit (one program in about 20,000 still reaches it; the test counts
// those and tolerates 1%).
//
// # Results
//
// A socket filter's return value is 32 bits, so results travel through
// memory: the program gets the single element of an array map and, before
// it exits, stores r0..r8 and its stack into that element (layout.go).
// The comparison covers the whole element (the data area the program
// read, wrote and updated atomically, all 64 bits of every register, the
// stack) and the return value (64 bits between uebpf's engines, the low
// 32 against the kernel).
//
// Every engine uses the same bytes: the map is a kernel BPF_F_MMAPABLE
// array opened with kbridge.Open, so uebpf programs address the kernel's
// own memory, and each run starts from the same initial contents copied
// into it. That avoids a second, userspace copy of the layout that could
// drift from the kernel's, and exercises kbridge on the way.
//
// # Kernel bugs
//
// The kernel is the reference, but not infallible: on Linux 6.18.44 the
// verifier prunes paths wrongly after atomic fetches from the stack and
// the kernel then runs a branch hard-wired for another path (fixed
// upstream in April 2026). FetchPrecisionBug detects it with a small
// probe, and KernelConfig then leaves stack atomic fetches out of the
// corpus (uebpf's engines still run them in TestEnginesAgree).
package kerneldiff
