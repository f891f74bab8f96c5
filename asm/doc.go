// Package asm is the lowest layer of uebpf: eBPF opcodes, the raw instruction
// slot, its binary encoding, and a text assembler (Assemble) and
// disassembler (Disassemble, Format) for the dialect of the eBPF
// conformance suite, which is uBPF's.
//
// It knows nothing of how programs run; package vm builds the program model
// on top of it.
//
// # Syntax
//
// One instruction per line; "#" starts a comment; blank lines are ignored.
// "name:" defines a label at the next instruction (on its own line or in
// front of one). Registers are %r0..%r10. Numbers are decimal or 0x hex,
// optionally signed; a 32-bit immediate may be written as its unsigned
// two's complement (0xffffffff is -1). Memory operands are [%r1], [%r1+8]
// or [%r10-4]. Jump and call targets are labels or slot offsets (+3, -2)
// counted from the next slot; an lddw counts two slots. The label "exit"
// means the first exit instruction unless a label of that name exists.
//
//	add sub mul div sdiv or and lsh rsh mod smod xor mov arsh  %dst, %src|imm
//	neg %dst                            (each ALU mnemonic + "32": 32-bit form)
//	movsx832 movsx1632 movsx864 movsx1664 movsx3264  %dst, %src
//	le16 le32 le64 be16 be32 be64 bswap16 bswap32 bswap64  %dst  (swapN = bswapN)
//	jeq jgt jge jset jne jsgt jsge jlt jle jslt jsle  %dst, %src|imm, target
//	                                    (each + "32": compare the low 32 bits)
//	ja target       ja32 target         (ja32: gotol, target in imm)
//	call 5          call local target   call %r2 (callx)   call runtime 5   exit
//	lddw %dst, imm64                    lddw %dst, map_val_by_idx(1)+16
//	ldxb ldxh ldxw ldxdw ldxsb ldxsh ldxsw  %dst, [%src+off]
//	stb sth stw stdw  [%dst+off], imm   stxb stxh stxw stxdw  [%dst+off], %src
//	lock [fetch] add|or|and|xor[32] [%dst+off], %src
//	lock xchg[32] | lock cmpxchg[32]  [%dst+off], %src   (these always fetch)
//	ldabsb ldabsh ldabsw imm            ldindb ldindh ldindw %src, imm
//	.raw 0x0000000000000095             (one slot as the suite's 64-bit "raw" number)
//
// The lddw pseudo sources of RFC 9669 are written kind(imm)[+next] with kind
// map_by_fd, map_val_by_fd, var_addr, code_addr, map_by_idx or
// map_val_by_idx.
//
// # Round trips
//
// Assemble(Disassemble(x)) reproduces x slot for slot for any decoded
// program. Slots that are not valid instructions (unknown opcodes,
// registers above %r10, reserved fields that are not zero, broken lddw
// pairs) disassemble to .raw lines with the reason in a comment, and
// Disassemble reports them as *SlotError values, so nothing is silently
// changed or dropped.
package asm
