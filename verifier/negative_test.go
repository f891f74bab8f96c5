package verifier_test

import (
	"testing"

	"github.com/uebpf/uebpf/verifier"
)

// Common program fragments. lookup leaves a map value or null of map 0
// (16-byte values) in r0.
const lookup = `
	stw [%r10-4], 0
	lddw %r1, map_by_fd(0)
	mov %r2, %r10
	add %r2, -4
	call 1
`

// lookupHash leaves a map value or null of map 1 (a hash, 8-byte values)
// in r0. Lookups in arrays with a constant key in range cannot fail, so
// null checks are tested on hashes.
const lookupHash = `
	stdw [%r10-8], 0
	lddw %r1, map_by_fd(1)
	mov %r2, %r10
	add %r2, -8
	call 1
`

const reserve = `
	lddw %r1, map_by_fd(2)
	mov %r2, 16
	mov %r3, 0
	call 131
`

// loopCall is a program that calls bpf_loop(4, cb, r3, 0) after pre (which
// sets r3) and returns 0; cb is the callback's body.
func loopCall(pre, cb string) string {
	return pre + "\nmov %r1, 4\nlddw %r2, code_addr(+5)\nmov %r4, 0\ncall 181\nmov %r0, 0\nexit\n" + cb
}

// stackCtx points r3 at 8 zeroed bytes of the stack, for loopCall.
const stackCtx = "stdw [%r10-8], 0\nmov %r3, %r10\nadd %r3, -8"

type negCase struct {
	name string
	src  string
	rule error
	msg  string
	opts *verifier.Options
}

var negativeSuite = map[string][]negCase{
	"uninitialised reads": {
		{"r0 at exit", "exit", verifier.ErrUninitialized, "R0 is not set before exit", nil},
		{"r2 in alu", "mov %r0, %r2\nexit", verifier.ErrUninitialized, "R2 is read before it is written", nil},
		{"r3 as dst", "add %r3, 1\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R3 is read", nil},
		{"stack 8 bytes", "ldxdw %r0, [%r10-8]\nexit", verifier.ErrUninitialized, "byte fp-8 is uninitialised", nil},
		{"stack partly written", "stw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit", verifier.ErrUninitialized, "byte fp-4 is uninitialised", nil},
		{"store from uninit", "stxdw [%r10-8], %r5\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R5 is read", nil},
		{"store through uninit", "stdw [%r4+0], 1\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R4 is read", nil},
		{"jump on uninit", "jeq %r7, 0, +0\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R7 is read", nil},
		{"clobbered by call", "mov %r1, 1\ncall 7\nmov %r0, %r1\nexit", verifier.ErrUninitialized, "R1 is read", nil},
		{"helper key uninit", "lddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -4\ncall 1\nmov %r0, 0\nexit", verifier.ErrUninitialized, "helper reads 4 bytes at fp-4", nil},
		{"callee r6", "call local f\nexit\nf:\nmov %r0, %r6\nexit", verifier.ErrUninitialized, "R6 is read", nil},
		{"callback r3", loopCall(stackCtx, "mov %r0, %r3\nexit"), verifier.ErrUninitialized, "R3 is read", nil},
		{"callback reads caller stack", loopCall("mov %r3, %r10\nadd %r3, -16", "ldxdw %r0, [%r2+0]\nand %r0, 1\nexit"), verifier.ErrUninitialized, "byte fp-16 is uninitialised", nil},
		{"variable offset read", "stdw [%r10-8], 0\nldxb %r2, [%r1+0]\nand %r2, 15\nmov %r3, %r10\nsub %r3, %r2\nldxb %r0, [%r3-1]\nexit", verifier.ErrUninitialized, "byte fp-16 is uninitialised", nil},
		{"one path uninit", "ldxb %r2, [%r1+0]\njeq %r2, 0, +1\nmov %r0, 1\nexit", verifier.ErrUninitialized, "R0 is not set", nil},
	},
	"stack out of bounds": {
		{"below frame", "stdw [%r10-520], 1\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "stack write of 8 bytes at fp-520", nil},
		{"above frame", "stdw [%r10+0], 1\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "stack write of 8 bytes at fp+0", nil},
		{"straddles top", "stw [%r10-2], 1\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp-2", nil},
		{"read above", "ldxb %r0, [%r10+1]\nexit", verifier.ErrOutOfBounds, "stack read of 1 bytes at fp+1", nil},
		{"moved pointer", "mov %r1, %r10\nadd %r1, -600\nstb [%r1+0], 0\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp-600", nil},
		{"moved up", "mov %r1, %r10\nadd %r1, 8\nstb [%r1-1], 0\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp+7", nil},
		{"variable offset", "ldxdw %r2, [%r1+0]\nmov %r3, %r10\nadd %r3, %r2\nstb [%r3-300], 0\nmov %r0, 0\nexit", verifier.ErrInvalidAccess, "stack access with a variable offset", nil},
		{"bounded variable offset too far", "ldxb %r2, [%r1+0]\nmov %r3, %r10\nsub %r3, %r2\nstb [%r3-300], 0\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp-555..fp-300", nil},
		{"variable offset reaches top", "ldxb %r2, [%r1+0]\nand %r2, 15\nmov %r3, %r10\nadd %r3, %r2\nstb [%r3-8], 0\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp-8..fp+7", nil},
		{"callback writes past ctx", loopCall(stackCtx, "stdw [%r2+8], 1\nmov %r0, 0\nexit"), verifier.ErrOutOfBounds, "stack write of 8 bytes at fp+0", nil},
		{"helper key past top", "mov %r2, %r10\nadd %r2, -2\nstb [%r10-1], 0\nstb [%r10-2], 0\nlddw %r1, map_by_fd(0)\ncall 1\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp+1", nil},
		{"helper memory too long", "stdw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 16\ncall 0x10000\nexit", verifier.ErrOutOfBounds, "fp+7", nil},
		{"callee frame below", "call local f\nexit\nf:\nstdw [%r10-516], 0\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "fp-516", nil},
	},
	"context out of bounds": {
		{"past end", "ldxdw %r0, [%r1+64]\nexit", verifier.ErrOutOfBounds, "context read of 8 bytes at offset 64, the context has 64 bytes", nil},
		{"straddles end", "ldxw %r0, [%r1+62]\nexit", verifier.ErrOutOfBounds, "offset 62", nil},
		{"negative", "ldxb %r0, [%r1-1]\nexit", verifier.ErrOutOfBounds, "offset -1", nil},
		{"write past end", "stdw [%r1+60], 0\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "context write of 8 bytes at offset 60", nil},
		{"moved", "add %r1, 60\nldxdw %r0, [%r1+0]\nexit", verifier.ErrOutOfBounds, "offset 60", nil},
		{"variable", "ldxb %r2, [%r1+0]\nadd %r1, %r2\nldxb %r0, [%r1+0]\nexit", verifier.ErrOutOfBounds, "context read of 1 bytes at offset 0..255", nil},
		{"empty context", "ldxb %r0, [%r1+0]\nexit", verifier.ErrOutOfBounds, "the context has 0 bytes", &verifier.Options{}},
		{"helper reads past ctx", "mov %r2, 100\ncall 0x10000\nexit", verifier.ErrOutOfBounds, "offset 99", nil},
		{"far negative", "add %r1, -100000\nldxb %r0, [%r1+0]\nexit", verifier.ErrOutOfBounds, "offset -100000", nil},
		{"atomic on ctx", "mov %r2, 1\nlock add [%r1+0], %r2\nmov %r0, 0\nexit", verifier.ErrInvalidAccess, "atomic operation on ctx memory", nil},
	},
	"map value out of bounds": {
		{"past end", lookup + "jeq %r0, 0, +1\nldxdw %r0, [%r0+16]\nexit", verifier.ErrOutOfBounds, "map value read of 8 bytes at offset 16, the map value has 16 bytes", nil},
		{"straddles", lookup + "jeq %r0, 0, +1\nldxdw %r0, [%r0+12]\nexit", verifier.ErrOutOfBounds, "offset 12", nil},
		{"negative", lookup + "jeq %r0, 0, +1\nldxb %r0, [%r0-1]\nexit", verifier.ErrOutOfBounds, "offset -1", nil},
		{"write past end", lookup + "jeq %r0, 0, +2\nstdw [%r0+16], 1\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "map value write of 8 bytes at offset 16", nil},
		{"unbounded index", lookup + "jeq %r0, 0, +4\nldxdw %r1, [%r0+0]\nadd %r0, %r1\nldxb %r0, [%r0+0]\nexit\nexit", verifier.ErrOutOfBounds, "unbounded", nil},
		{"index bound off by one", lookup + "jeq %r0, 0, +5\nldxdw %r1, [%r0+0]\njgt %r1, 16, +3\nadd %r0, %r1\nldxb %r0, [%r0+0]\nexit\nexit", verifier.ErrOutOfBounds, "offset 0..16", nil},
		{"signed index", lookup + "jeq %r0, 0, +5\nldxdw %r1, [%r0+0]\njsgt %r1, 15, +3\nadd %r0, %r1\nldxb %r0, [%r0+0]\nexit\nexit", verifier.ErrOutOfBounds, "is unbounded", nil},
		{"direct value past end", "lddw %r1, map_val_by_fd(5)+8\nldxdw %r0, [%r1+8]\nexit", verifier.ErrOutOfBounds, "offset 16", nil},
		{"hash value 8 bytes", "stdw [%r10-8], 0\nlddw %r1, map_by_fd(1)\nmov %r2, %r10\nadd %r2, -8\ncall 1\njeq %r0, 0, +1\nldxdw %r0, [%r0+8]\nexit", verifier.ErrOutOfBounds, "the map value has 8 bytes", nil},
		{"update value too short", "stw [%r10-4], 0\nstdw [%r10-16], 0\nlddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0\ncall 2\nexit", verifier.ErrOutOfBounds, "fp+7", nil},
		{"ringbuf record past end", reserve + "jeq %r0, 0, +4\nstdw [%r0+16], 0\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "memory write of 8 bytes at offset 16, the memory has 16 bytes", nil},
		{"callback index unchecked", "mov %r3, 0\nmov %r1, 4\nlddw %r2, code_addr(+5)\nmov %r4, 0\ncall 181\nmov %r0, 0\nexit\nmov %r6, %r1\n" + lookup + "jeq %r0, 0, +2\nadd %r0, %r6\nldxb %r1, [%r0+0]\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "offset 0..8388607", nil},
		{"jmp32 bound too loose", "ldxdw %r2, [%r1+0]\njgt32 %r2, 16, +6\nmov32 %r2, %r2\nlddw %r3, map_val_by_fd(5)\nadd %r3, %r2\nldxb %r0, [%r3+0]\nexit\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "offset 0..31", nil},
		{"signed jmp32 does not bound", "ldxdw %r2, [%r1+0]\njsgt32 %r2, 15, +6\nmov32 %r2, %r2\nlddw %r3, map_val_by_fd(5)\nadd %r3, %r2\nldxb %r0, [%r3+0]\nexit\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "offset 0..4294967295", nil},
	},
	"missing null check": {
		{"callback ctx null", loopCall("mov %r3, 0", "ldxdw %r0, [%r2+0]\nexit"), verifier.ErrInvalidAccess, "R2 is a number", nil},
		{"read", lookupHash + "ldxdw %r0, [%r0+0]\nexit", verifier.ErrNullPointer, "R0 is a map_value_or_null: compare it with 0", nil},
		{"write", lookupHash + "stdw [%r0+0], 1\nmov %r0, 0\nexit", verifier.ErrNullPointer, "before the write", nil},
		{"copy", lookupHash + "mov %r6, %r0\nldxdw %r0, [%r6+0]\nexit", verifier.ErrNullPointer, "R6 is a map_value_or_null", nil},
		{"wrong branch", lookupHash + "jne %r0, 0, +1\nldxdw %r0, [%r0+0]\nexit", verifier.ErrInvalidAccess, "R0 is a number", nil},
		{"checked other", lookupHash + "mov %r6, %r0\n" + lookupHash + "jeq %r6, 0, +1\nldxdw %r0, [%r0+0]\nexit", verifier.ErrNullPointer, "map_value_or_null", nil},
		{"ringbuf record", reserve + "stdw [%r0+0], 0\nexit", verifier.ErrNullPointer, "R0 is a mem_or_null", nil},
		{"helper arg", lookupHash + "mov %r1, %r0\nmov %r2, 8\ncall 0x10000\nexit", verifier.ErrNullPointer, "before passing it to a helper", nil},
		{"arith before check", lookupHash + "add %r0, 8\nexit", verifier.ErrPointerArith, "before it is checked against null", nil},
		{"jset is not a check", lookupHash + "jset %r0, 1, +1\nmov %r0, 0\nexit", verifier.ErrPointerCompare, "may only be compared with 0", nil},
		{"32-bit check", lookupHash + "jeq32 %r0, 0, +1\nldxdw %r0, [%r0+0]\nexit", verifier.ErrPointerCompare, "may only be compared with 0", nil},
		{"spilled copy", lookupHash + "stxdw [%r10-16], %r0\nldxdw %r1, [%r10-16]\nldxb %r0, [%r1+0]\nexit", verifier.ErrNullPointer, "R1 is a map_value_or_null", nil},
	},
	"pointer arithmetic": {
		{"multiply pointer", "mul %r1, 2\nmov %r0, 0\nexit", verifier.ErrPointerArith, "mul on pointer R1 prohibited", nil},
		{"32-bit add", "add32 %r1, 1\nmov %r0, 0\nexit", verifier.ErrPointerArith, "32-bit add on pointer", nil},
		{"pointer minus pointer", "mov %r2, %r10\nsub %r2, %r1\nmov %r0, 0\nexit", verifier.ErrPointerArith, "sub on pointer", nil},
		{"map pointer arith", "lddw %r1, map_by_fd(0)\nadd %r1, 8\nmov %r0, 0\nexit", verifier.ErrPointerArith, "map_ptr", nil},
		{"and on pointer", "and %r1, -8\nmov %r0, 0\nexit", verifier.ErrPointerArith, "and on pointer R1", nil},
		{"or on pointer", "or %r1, 1\nmov %r0, 0\nexit", verifier.ErrPointerArith, "or on pointer R1", nil},
		{"shift pointer", "lsh %r1, 1\nmov %r0, 0\nexit", verifier.ErrPointerArith, "lsh on pointer R1", nil},
		{"negate pointer", "neg %r1\nmov %r0, 0\nexit", verifier.ErrPointerArith, "neg on pointer R1", nil},
		{"scalar minus pointer", "mov %r2, 0\nsub %r2, %r1\nmov %r0, 0\nexit", verifier.ErrPointerArith, "sub on pointer R1", nil},
		{"pointer plus pointer", "add %r1, %r10\nmov %r0, 0\nexit", verifier.ErrPointerArith, "add on pointer R1", nil},
		{"xor pointer", "mov %r2, 3\nxor %r1, %r2\nmov %r0, 0\nexit", verifier.ErrPointerArith, "xor on pointer R1", nil},
		{"32-bit sub on stack pointer", "mov %r2, %r10\nsub32 %r2, 8\nmov %r0, 0\nexit", verifier.ErrPointerArith, "32-bit sub on pointer R2", nil},
		{"divide pointer", "div %r1, 2\nmov %r0, 0\nexit", verifier.ErrPointerArith, "div on pointer R1", nil},
	},
	"pointer leaks": {
		{"return ctx", "mov %r0, %r1\nexit", verifier.ErrPointerLeak, "returns a pointer (R0=ctx())", nil},
		{"return stack", "mov %r0, %r10\nexit", verifier.ErrPointerLeak, "returns a pointer", nil},
		{"mov32 of pointer", "mov32 %r0, %r1\nexit", verifier.ErrPointerLeak, "32-bit or sign-extending move", nil},
		{"pointer into map", lookup + "jeq %r0, 0, +1\nstxdw [%r0+0], %r10\nmov %r0, 0\nexit", verifier.ErrPointerLeak, "stored into map_value memory", nil},
		{"pointer into ctx", "stxdw [%r1+0], %r1\nmov %r0, 0\nexit", verifier.ErrPointerLeak, "stored into ctx memory", nil},
		{"partial spill read", "stxdw [%r10-8], %r1\nldxw %r0, [%r10-8]\nexit", verifier.ErrPointerLeak, "partial read of a spilled pointer", nil},
		{"partial spill overwrite", "stxdw [%r10-8], %r1\nstw [%r10-8], 0\nmov %r0, 0\nexit", verifier.ErrPointerLeak, "partial overwrite of a spilled pointer", nil},
		{"compare pointers", "jgt %r1, %r10, +0\nmov %r0, 0\nexit", verifier.ErrPointerCompare, "comparison of pointer", nil},
		{"pointer to helper memory as key", "mov %r0, 0\nstxdw [%r10-8], %r1\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\ncall 0x10000\nexit", verifier.ErrPointerLeak, "helper reads a spilled pointer", nil},
		{"callee stack escapes", "mov %r1, %r10\nadd %r1, -8\ncall local f\nmov %r0, 0\nexit\nf:\nstxdw [%r1+0], %r10\nmov %r0, 0\nexit", verifier.ErrPointerLeak, "outlives it", nil},
		{"callee returns its stack", "call local f\nmov %r0, 0\nexit\nf:\nmov %r0, %r10\nexit", verifier.ErrPointerLeak, "pointer to its own stack", nil},
		{"callback stack escapes", loopCall(stackCtx, "stxdw [%r2+0], %r10\nmov %r0, 0\nexit"), verifier.ErrPointerLeak, "pointer to the callback's stack", nil},
	},
	"bad helper arguments": {
		{"no prototype", "call 0x10001\nexit", verifier.ErrHelperCall, "has no prototype", nil},
		{"scalar as map", "mov %r1, 0\nmov %r2, 0\ncall 1\nmov %r0, 0\nexit", verifier.ErrHelperArg, "must be a map pointer", nil},
		{"ctx as key", "mov %r2, %r1\nlddw %r1, map_by_fd(1)\ncall 1\nmov %r0, 0\nexit", verifier.ErrOutOfBounds, "context read of 1 bytes at offset 7, the context has 4 bytes", &verifier.Options{ContextSize: 4}},
		{"scalar as key", "lddw %r1, map_by_fd(0)\nmov %r2, 0\ncall 1\nmov %r0, 0\nexit", verifier.ErrHelperArg, "pointer to a map key", nil},
		{"variable size", "ldxdw %r2, [%r1+0]\nmov %r1, %r10\ncall 0x10000\nexit", verifier.ErrHelperArg, "not bounded", nil},
		{"zero size", "stdw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 0\ncall 0x10000\nexit", verifier.ErrHelperArg, "it may be 0", nil},
		{"size is pointer", "mov %r2, %r1\ncall 0x10000\nexit", verifier.ErrHelperArg, "it is a ctx", nil},
		{"tail call on array", "lddw %r2, map_by_fd(0)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrHelperArg, "tail calls need a program array", nil},
		{"tail call without ctx", "mov %r1, %r10\nlddw %r2, map_by_fd(3)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrHelperArg, "context pointer", nil},
		{"submit non record", lookup + "jeq %r0, 0, +3\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit", verifier.ErrHelperArg, "not a record from a reserve call", nil},
		{"submit moved record", reserve + "jeq %r0, 0, +4\nmov %r1, %r0\nadd %r1, 8\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit", verifier.ErrHelperArg, "points inside the record", nil},
		{"format not rodata", "stdw [%r10-8], 0\nstdw [%r10-16], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -16\nmov %r4, %r10\nadd %r4, -16\nmov %r5, 8\ncall 165\nexit", verifier.ErrHelperArg, "not a pointer into a read-only map", nil},
		{"reserve variable size", "lddw %r1, map_by_fd(2)\nldxb %r2, [%r1+0]\nmov %r3, 0\ncall 131\nexit", verifier.ErrInvalidAccess, "map_ptr", nil},
		{"uninit arg", "lddw %r1, map_by_fd(0)\ncall 1\nmov %r0, 0\nexit", verifier.ErrUninitialized, "argument 2 (R2) is not initialised", nil},
		{"callback not a function", "mov %r1, 4\nmov %r2, 0\nmov %r3, 0\nmov %r4, 0\ncall 181\nmov %r0, 0\nexit", verifier.ErrHelperArg, "pass a function of the program", nil},
		{"callback is a map", "mov %r1, 4\nlddw %r2, map_by_fd(0)\nmov %r3, 0\nmov %r4, 0\ncall 181\nmov %r0, 0\nexit", verifier.ErrHelperArg, "must be a function", nil},
	},
	"reference leaks": {
		{"never released", reserve + "mov %r0, 0\nexit", verifier.ErrReferenceLeak, "are not released on this path", nil},
		{"released on null path only", reserve + "jne %r0, 0, +2\nmov %r0, 0\nexit\nmov %r0, 0\nexit", verifier.ErrReferenceLeak, "not released", nil},
		{"checked not released", reserve + "jeq %r0, 0, +1\nstdw [%r0+0], 0\nmov %r0, 0\nexit", verifier.ErrReferenceLeak, "not released", nil},
		{"one branch leaks", reserve + "jeq %r0, 0, +7\nmov %r6, %r0\ncall 7\njeq %r0, 0, +4\nmov %r1, %r6\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit", verifier.ErrReferenceLeak, "not released", nil},
		{"double release", reserve + "jeq %r0, 0, +7\nmov %r6, %r0\nmov %r1, %r6\nmov %r2, 0\ncall 132\nmov %r1, %r6\nmov %r2, 0\ncall 133\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R6 is read", nil},
		{"use after release", reserve + "jeq %r0, 0, +5\nmov %r6, %r0\nmov %r1, %r0\nmov %r2, 0\ncall 132\nstdw [%r6+0], 0\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R6 is read", nil},
		{"two reserves one release", reserve + "mov %r6, %r0\n" + reserve + "jeq %r0, 0, +3\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit", verifier.ErrReferenceLeak, "not released", nil},
		{"tail call holding", reserve + "jeq %r0, 0, +5\nmov %r6, %r0\nmov %r1, %r1\nlddw %r2, map_by_fd(3)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R1 is read", nil},
		{"tail call holding ref", "mov %r9, %r1\n" + reserve + "jeq %r0, 0, +5\nmov %r1, %r9\nlddw %r2, map_by_fd(3)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrReferenceLeak, "tail call while holding references", nil},
		{"leak in callback", loopCall("mov %r3, 0", reserve+"mov %r0, 0\nexit"), verifier.ErrReferenceLeak, "the callback returns holding references", nil},
		{"leak in callee", "call local f\nmov %r0, 0\nexit\nf:\n" + reserve + "mov %r0, 0\nexit", verifier.ErrReferenceLeak, "not released", nil},
	},
	"read-only memory": {
		{"ctx read-only", "stw [%r1+0], 1\nmov %r0, 0\nexit", verifier.ErrReadOnly, "the context is read-only", &verifier.Options{ContextSize: 8, ContextReadOnly: true}},
		{"ctx stx read-only", "mov %r2, 1\nstxb [%r1+3], %r2\nmov %r0, 0\nexit", verifier.ErrReadOnly, "read-only", &verifier.Options{ContextSize: 8, ContextReadOnly: true}},
		{"rodata store", "lddw %r1, map_val_by_fd(4)\nstw [%r1+0], 1\nmov %r0, 0\nexit", verifier.ErrReadOnly, "read-only map value", nil},
		{"rodata stx", "lddw %r1, map_val_by_fd(4)+8\nmov %r2, 0\nstxdw [%r1+0], %r2\nmov %r0, 0\nexit", verifier.ErrReadOnly, "read-only map value", nil},
		{"rodata atomic", "lddw %r1, map_val_by_fd(4)\nmov %r2, 1\nlock add [%r1+0], %r2\nmov %r0, 0\nexit", verifier.ErrReadOnly, "read-only", nil},
		{"rodata lookup value", "stw [%r10-4], 0\nlddw %r1, map_by_fd(4)\nmov %r2, %r10\nadd %r2, -4\ncall 1\njeq %r0, 0, +1\nstb [%r0+0], 1\nmov %r0, 0\nexit", verifier.ErrReadOnly, "read-only", nil},
		{"rodata as helper buffer", "lddw %r1, map_val_by_fd(4)\nmov %r2, 8\ncall 16\nexit", verifier.ErrReadOnly, "read-only", nil},
		{"ctx helper buffer", "mov %r2, 8\ncall 16\nexit", verifier.ErrReadOnly, "the context is read-only", &verifier.Options{ContextSize: 8, ContextReadOnly: true}},
		{"rodata as snprintf buffer", "lddw %r1, map_val_by_fd(4)\nmov %r2, 8\nlddw %r3, map_val_by_fd(4)\nmov %r4, 0\nmov %r5, 0\ncall 165\nexit", verifier.ErrReadOnly, "read-only map value", nil},
		{"ctx moved write", "add %r1, 4\nsth [%r1+0], 1\nmov %r0, 0\nexit", verifier.ErrReadOnly, "offset 4", &verifier.Options{ContextSize: 8, ContextReadOnly: true}},
	},
	"loops": {
		{"self jump", "mov %r0, 0\nja -1", verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"two-insn loop", "mov %r0, 0\nl:\nmov %r1, 1\nja l", verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"step past an unknown bound", "ldxdw %r2, [%r1+0]\nmov %r0, 0\nl:\nadd %r0, 4\njlt %r0, %r2, l\nexit", verifier.ErrInfiniteLoop, "loop at 2: no value moves towards an exit", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"counter never changes", "mov %r0, 0\nl:\njlt %r0, 10, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"wrong direction", "mov %r0, 10\nl:\nsub %r0, 1\njne %r0, 11, l\nexit", verifier.ErrInfiniteLoop, "loop at 1: no value moves towards an exit", &verifier.Options{MaxInstructions: 10000}},
		{"reset in body", "mov %r0, 0\nl:\nmov %r0, 0\nadd %r0, 1\njlt %r0, 10, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"loaded value", "mov %r0, 0\nl:\nldxb %r2, [%r1+0]\njeq %r2, 0, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", &verifier.Options{ContextSize: 8}},
		{"helper result", "l:\ncall 7\njne %r0, 0, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"too complex body", "mov %r0, 0\nl:\nadd %r0, 1\njlt %r0, 100000, l\nexit", verifier.ErrTooComplex, "more than 5 instructions", &verifier.Options{MaxInstructions: 5}},
		{"unknown 64-bit bound", "ldxdw %r2, [%r1+0]\nmov %r0, 0\nl:\nadd %r0, 1\njlt %r0, %r2, l\nexit", verifier.ErrTooComplex, "loop at 2 may run 4294967296 times or more per entry", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"counter masked", "mov %r0, 0\nl:\nadd %r0, 1\nand %r0, 7\njne %r0, 8, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"counter wraps", "mov32 %r0, 0\nl:\nadd32 %r0, 2\njne32 %r0, 1, l\nexit", verifier.ErrInfiniteLoop, "loop at 1: no value moves towards an exit", &verifier.Options{MaxInstructions: 10000}},
		{"counter reset on one path", "mov %r0, 0\nl:\nldxb %r2, [%r1+0]\njeq %r2, 0, +2\nadd %r0, 1\nja +1\nmov %r0, 0\njlt %r0, 1000, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"counter without bound", "mov %r0, 0\nl:\nadd %r0, 1\nldxb %r2, [%r1+0]\njne %r2, 0, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"up on one path, down on the other", "mov %r0, 500\nl:\nldxb %r2, [%r1+0]\njeq %r2, 0, +2\nadd %r0, 1\nja +1\nsub %r0, 1\njlt %r0, 1000, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"down by two past zero", "mov %r0, 11\nl:\nsub %r0, 2\njne %r0, 0, l\nexit", verifier.ErrInfiniteLoop, "loop at 1: no value moves towards an exit", &verifier.Options{MaxInstructions: 10000}},
		{"counter copied back", "mov %r0, 0\nl:\nmov %r3, %r0\nadd %r0, 1\nldxb %r2, [%r1+0]\njeq %r2, 0, +1\nmov %r0, %r3\njlt %r0, 100000, l\nexit", verifier.ErrInfiniteLoop, "infinite loop", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"nested inner counter reset", "mov %r0, 0\no:\nmov %r2, 0\ni:\nadd %r2, 1\njlt %r2, 1000, i\nldxb %r3, [%r1+0]\njeq %r3, 0, o\nadd %r0, 1\njlt %r0, 1000, o\nexit", verifier.ErrInfiniteLoop, "infinite loop", &verifier.Options{ContextSize: 8, MaxInstructions: 20000}},
		// Back while the remainder is 0, which says nothing of d against
		// i: with i = 0 it never ends.
		{"remainder zero goes back", "ldxw %r2, [%r1+0]\nand32 %r2, 1\nmov32 %r4, 2\nl:\nmov32 %r5, %r2\nmod32 %r5, %r4\njne32 %r5, 0, +2\nadd32 %r4, 1\nja l\nmov32 %r0, %r4\nexit", verifier.ErrInfiniteLoop, "no value moves towards an exit", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		// d steps over i: an odd i is never divisible by an even d.
		{"divisor steps by two", "ldxw %r2, [%r1+0]\nor32 %r2, 3\nmov32 %r4, 2\nl:\nmov32 %r5, %r2\nmod32 %r5, %r4\njeq32 %r5, 0, +2\nadd32 %r4, 2\nja l\nmov32 %r0, %r4\nexit", verifier.ErrInfiniteLoop, "no value moves towards an exit", &verifier.Options{ContextSize: 8, MaxInstructions: 10000}},
		{"loop in callback", loopCall("mov %r3, 0", "mov %r0, 0\nja -1"), verifier.ErrInfiniteLoop, "infinite loop", nil},
		{"recursion", "mov %r0, 0\ncall local f\nexit\nf:\ncall local f\nexit", verifier.ErrInvalidCall, "call depth exceeds 8 frames", nil},
	},
	"bad calls": {
		{"callback returns 2", loopCall("mov %r3, 0", "mov %r0, 2\nexit"), verifier.ErrInvalidReturn, "must return 0 or 1", nil},
		{"callback returns unknown", loopCall("mov %r3, 0", "call 7\nexit"), verifier.ErrInvalidReturn, "must return 0 or 1", nil},
		{"callback returns pointer", loopCall("mov %r3, 0", "mov %r0, %r10\nexit"), verifier.ErrInvalidReturn, "R0 is a fp", nil},
		{"tail call map value", "mov %r6, %r1\n" + lookup + "jeq %r0, 0, +5\nmov %r1, %r6\nmov %r2, %r0\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrHelperArg, "must be a map pointer", nil},
		{"callx", "mov %r2, 1\ncall %r2\nmov %r0, 0\nexit", verifier.ErrInvalidCall, "indirect calls", nil},
		{"deep recursion", "call local f\nexit\nf:\nmov %r0, 0\ncall local f\nexit", verifier.ErrInvalidCall, "call depth", nil},
		{"no proto", "mov %r1, 0\ncall 0x10001\nmov %r0, 0\nexit", verifier.ErrHelperCall, "no prototype", nil},
		{"tail call hash", "lddw %r2, map_by_fd(1)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrHelperArg, "program array", nil},
		{"tail call ringbuf", "lddw %r2, map_by_fd(2)\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrHelperArg, "program array", nil},
		{"tail call scalar map", "mov %r2, 0\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit", verifier.ErrHelperArg, "map pointer", nil},
		{"callee uninit r0", "call local f\nexit\nf:\nexit", verifier.ErrUninitialized, "R0 is not set before exit", nil},
		{"callee uses caller r6", "mov %r6, 1\ncall local f\nexit\nf:\nmov %r0, %r6\nexit", verifier.ErrUninitialized, "R6 is read", nil},
		{"caller r1 after call", "mov %r1, 1\ncall local f\nmov %r0, %r1\nexit\nf:\nmov %r0, 0\nexit", verifier.ErrUninitialized, "R1 is read", nil},
		{"call into loop", "call local f\nexit\nf:\nja f", verifier.ErrInfiniteLoop, "infinite loop", nil},
	},
	"invalid jumps": {
		{"unreachable", "mov %r0, 0\nexit\nmov %r0, 1\nexit", verifier.ErrUnreachable, "instruction 2 can never run", nil},
		{"unreachable after ja", "mov %r0, 0\nja +1\nmov %r0, 1\nexit", verifier.ErrUnreachable, "instruction 2", nil},
		{"jump into function", "mov %r0, 0\njeq %r1, 0, g\ncall local g\nexit\ng:\nmov %r0, 0\nexit", verifier.ErrInvalidJump, "jump from function at 0 into function at 4", nil},
		{"fall into function", "call local g\nmov %r0, 0\ng:\nmov %r0, 1\nexit", verifier.ErrInvalidJump, "falls through into the function at 2", nil},
		{"jump out of function", "call local g\nexit\ng:\nmov %r0, 0\nja -4\nexit", verifier.ErrInvalidJump, "jump from function at 2 into function at 0", nil},
		{"unreachable function tail", "call local g\nexit\ng:\nmov %r0, 0\nexit\nmov %r0, 1\nexit", verifier.ErrUnreachable, "instruction 4", nil},
		{"dead branch code", "mov %r0, 0\nja +2\nmov %r0, 1\nmov %r0, 2\nexit", verifier.ErrUnreachable, "instruction 2", nil},
		{"jump into callback", "mov %r0, 0\nlddw %r2, code_addr(+2)\nja +1\nexit\nmov %r0, 0\nexit", verifier.ErrInvalidJump, "jump from function at 0 into function at 4", nil},
		{"jump over exit to other func", "call local g\nja +2\ng:\nmov %r0, 0\nexit\nexit", verifier.ErrInvalidJump, "into function", nil},
		{"unreachable lddw", "mov %r0, 0\nexit\nlddw %r0, 1\nexit", verifier.ErrUnreachable, "instruction 2", nil},
	},
}

// TestNegativeSuiteSize keeps the suite at 150 programs or more, and 10 or
// more in each category.
func TestNegativeSuiteSize(t *testing.T) {
	total := 0
	for cat, cases := range negativeSuite {
		total += len(cases)
		if len(cases) < 10 {
			t.Errorf("category %q has %d programs, want 10 or more", cat, len(cases))
		}
		t.Logf("%-28s %d", cat, len(cases))
	}
	if len(negativeSuite) < 13 || total < 150 {
		t.Errorf("%d programs in %d categories, want 150 or more in 13", total, len(negativeSuite))
	}
}

func TestNegativeSuite(t *testing.T) {
	total := 0
	for cat, cases := range negativeSuite {
		for _, tc := range cases {
			total++
			t.Run(cat+"/"+tc.name, func(t *testing.T) {
				checkRejected(t, verifyAsm(t, tc.src, tc.opts), tc.rule, tc.msg)
			})
		}
	}
	t.Logf("%d unsafe programs", total)
}
