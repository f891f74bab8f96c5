// Package kerneldiff checks uebpf's engines against the Linux kernel: it
// generates programs the kernel's verifier accepts, runs each one in the
// kernel (BPF_PROG_TEST_RUN on a socket filter, through cilium/ebpf), on
// the interpreter and on the JIT in checked and unchecked mode, and
// compares the results bit for bit.
//
// # Programs
//
// Generate(seed, cfg) is deterministic: a seed names a program, so a
// failure reproduces from its seed alone. Programs are valid by
// construction for the kernel verifier (privileged): every register and
// stack byte is written before it is read, memory accesses use constant
// offsets from the frame pointer or from a map value pointer, loops count
// a constant number of iterations in r8, calls go only to later functions
// (no recursion). They use ALU64 and ALU32 with every operation (sdiv,
// smod, movsx and bswap with cpu v4), loads (sign-extending with v4) and
// stores of every size, atomics on the stack and on the map value,
// forward jumps and jmp32, if/else with ja (gotol with v4), bounded
// loops, bpf-to-bpf calls, array lookups through bpf_map_lookup_elem
// (hit and miss) and lddw of constants, maps and map values.
//
// # Results
//
// A socket filter's return value is 32 bits, so results travel through
// memory: the program gets the single element of an array map and, before
// it exits, stores r0..r8 and its stack words into that element (the
// layout is in layout.go). The comparison covers the whole element (the
// data area the program read, wrote and updated atomically, all 64 bits
// of every register, the stack) and the return value (64 bits between
// uebpf's engines, the low 32 against the kernel).
//
// Every engine uses the same bytes: the map is a kernel BPF_F_MMAPABLE
// array opened with kbridge.Open, so uebpf programs address the kernel's
// own memory, and each run starts from the same initial contents copied
// into it. That avoids a second, userspace copy of the layout that could
// drift from the kernel's. Without the kernel (not root), the same
// programs run on a userspace maps.Array to compare the interpreter with
// the JIT.
package kerneldiff
