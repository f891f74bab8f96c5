// Package x86 encodes the x86-64 instructions the JIT emits.
//
// It is a small, purpose-built encoder, not an assembler: each function
// appends one instruction (or one instruction form) to an Asm buffer. The
// tests decode every form with golang.org/x/arch/x86/x86asm (and llvm-mc
// when installed) and compare with the intended instruction.
//
// Operand sizes are given in bytes (1, 2, 4, 8). As in hardware, a 4-byte
// operation on a register zero-extends into the upper 32 bits.
package x86
