// Package arm64 encodes the A64 (AArch64) instructions an eBPF JIT emits.
//
// Like package x86 it is a small, purpose-built encoder, not an assembler.
// A64 instructions are all one 32-bit word, so each encoder is a pure
// function returning that word; Asm collects words into machine code and
// patches branches once their targets are known. An encoder whose operands
// cannot be encoded (an immediate out of range, a constant that is not a
// logical immediate, a branch that does not reach) returns ok == false and
// the back end picks another sequence. Passing a register that the operand
// cannot name (SP where the encoding means the zero register, or the
// reverse) is a bug in the caller and panics.
//
// # Operand sizes
//
// As in package x86, sizes are in bytes: 4 selects the 32-bit (W register)
// form of an instruction, 8 the 64-bit (X register) form, and memory
// accesses take 1, 2, 4 or 8. A 32-bit operation zero-extends its result
// into the upper half of the X register, which is what eBPF's ALU32 needs.
//
// # Register 31
//
// The encoding 31 means SP in some operand slots and XZR/WZR (the zero
// register) in others: the base register of a load or store, either
// operand of ADD/SUB immediate (when it does not set flags) and the
// destination of a logical immediate mean SP; everything else means the
// zero register. Reg keeps them apart (SP and XZR are different values)
// and every encoder checks that the register fits its slot. Where an
// instruction has a form that takes SP, like ADD (extended register) for a
// register-register add, the encoder switches to it: ALUReg(ADD, 8, X0, SP,
// X1) is "add x0, sp, x1", not "add x0, xzr, x1".
//
// # Branches
//
// PC-relative offsets are in bytes from the branch itself (x86 counts from
// the next instruction) and must be multiples of 4. A forward branch is
// emitted with offset 0 and fixed with Asm.PatchBranch once its target is
// known; RangeB, RangeCond and RangeTB give each kind's reach, which a
// back end checks (or inverts the condition around a B) for far targets.
//
// # Registers Go reserves
//
// Generated code runs on a goroutine stack, called from a Go assembly
// trampoline, so it must leave alone the registers Go's arm64 ABI gives a
// fixed meaning (see Go's cmd/compile/abi-internal.md):
//
//   - X18 (RegPlatform) belongs to the platform (Apple and Windows use it);
//     Go never uses it and neither may we.
//   - X26 (RegClosure) holds the closure context on calls.
//   - X27 (RegTmp) is the Go assembler's temporary; the linker's
//     trampolines and long branches may clobber it, and the trampoline's
//     code may too.
//   - X28 (RegG) holds the current goroutine, g, which Go code, signal
//     handlers and the runtime expect to find there at all times.
//   - X29 (RegFP) is the frame pointer, which profilers and tracebacks
//     walk.
//   - X30 (RegLR) is the link register, overwritten by BL and BLR.
//
// X16 and X17 (IP0, IP1) may be clobbered by the linker's veneers on any
// call, so they hold nothing across one. Reserved reports the registers
// above; a back end allocates from the others.
//
// # Testing
//
// Every encoder is checked by decoding its words with
// golang.org/x/arch/arm64/arm64asm and comparing the GNU-syntax text with
// the intended instruction, on a table of edge cases and on random
// operands (FuzzEncode does the same under the fuzzer); whether operands
// are encodable is decided independently of the encoder. arm64asm does
// not know the LSE atomics, so llvm-mc-19 checks those (and decodes the
// rest once more). On linux/arm64 (qemu-aarch64 on amd64 machines),
// TestExecute runs encoder output.
package arm64
