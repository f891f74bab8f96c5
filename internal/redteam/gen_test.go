package redteam

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Programs of the helper cases are generated from argument lists in a
// small notation, one operand per argument register r1..r5:
//
//	"r10-64"      the frame pointer plus a constant
//	"ctx", "ctx+8" the context (saved in r9) plus a constant
//	"val", "val+1" the value of array[0] (looked up into r8 by the prologue)
//	"rec", "rec+8" a 64-byte ring record the prologue reserved (r7, may be 0)
//	"map3"        lddw map_by_fd(3); "map3+1" the pointer plus a constant
//	"mapv1"       lddw map_val_by_fd(1)
//	"fn"          the address of the callback "cb" (code_addr)
//	a number      the number (64-bit; lddw)

// prologue saves the context, zeroes a key at r10-8 and a value at
// r10-40..-16, looks up array[0] into r8 and reserves a ring record into r7.
const prologue = `
	mov %r9, %r1
	stdw [%r10-8], 0
	stdw [%r10-16], 0
	stdw [%r10-24], 0
	stdw [%r10-32], 0
	stdw [%r10-40], 0
	lddw %r1, map_by_fd(1)
	mov %r2, %r10
	add %r2, -8
	call 1
	mov %r8, %r0
	lddw %r1, map_by_fd(0)
	mov %r2, 64
	mov %r3, 0
	call 131
	mov %r7, %r0
`

// epilogue discards the record and returns 0.
const epilogue = `
	jeq %r7, 0, +3
	mov %r1, %r7
	mov %r2, 0
	call 133
	mov %r0, 0
	exit
`

// operand emits code that puts operand a in register r.
func operand(r int, a string) string {
	reg := fmt.Sprintf("%%r%d", r)
	base, off := a, int64(0)
	if i := strings.LastIndexAny(a, "+-"); i > 0 {
		n, err := strconv.ParseInt(a[i:], 0, 64)
		if err == nil {
			base, off = a[:i], n
		}
	}
	var s string
	switch {
	case base == "r10":
		s = fmt.Sprintf("mov %s, %%r10\n", reg)
	case base == "ctx":
		s = fmt.Sprintf("mov %s, %%r9\n", reg)
	case base == "val":
		s = fmt.Sprintf("mov %s, %%r8\n", reg)
	case base == "rec":
		s = fmt.Sprintf("mov %s, %%r7\n", reg)
	case base == "fn":
		s = fmt.Sprintf("lddw %s, code_addr(@cb)\n", reg)
	case strings.HasPrefix(base, "mapv"):
		s = fmt.Sprintf("lddw %s, map_val_by_fd(%s)\n", reg, base[4:])
	case strings.HasPrefix(base, "map"):
		s = fmt.Sprintf("lddw %s, map_by_fd(%s)\n", reg, base[3:])
	default:
		n, err := strconv.ParseUint(a, 0, 64)
		if err != nil {
			v, err2 := strconv.ParseInt(a, 0, 64)
			if err2 != nil {
				panic("bad operand " + a)
			}
			n = uint64(v)
		}
		return fmt.Sprintf("lddw %s, %#x\n", reg, n)
	}
	if off != 0 {
		if off >= -1<<31 && off < 1<<31 {
			s += fmt.Sprintf("add %s, %d\n", reg, off)
		} else {
			s += fmt.Sprintf("lddw %%r0, %#x\nadd %s, %%r0\n", uint64(off), reg)
		}
	}
	return s
}

// calls builds a program that calls helper num once per argument list,
// ignoring the results, between the prologue and the epilogue. cb, if not
// empty, is appended as the callback function "cb".
func calls(num int, argLists [][]string, cb string) string {
	var b strings.Builder
	b.WriteString(prologue)
	for _, args := range argLists {
		for i, a := range args {
			b.WriteString(operand(i+1, a))
		}
		fmt.Fprintf(&b, "call %d\n", num)
	}
	b.WriteString(epilogue)
	if cb != "" {
		b.WriteString("cb:\n" + cb + "\n")
	}
	return b.String()
}

// wildPointers are addresses no run may touch: NULL, small numbers, the
// kernel half, the top of the address space, non-canonical addresses, a
// likely-mapped Go heap address range and the top of the user half.
var wildPointers = []string{
	"0", "1", "0x1000", "0xffffffffffffffff", "0xffff800000000000",
	"0x8000000000000000", "0x00007ffffffff000", "0xc000000000", "0x400000",
}

// hostileCtx is the context of helper cases, ctxSize bytes: format
// strings at 0, 32 and 64 (the last with no NUL before 96), a string at
// 96, and at 128 an array of u64 arguments holding wild pointers.
const ctxSize = 256

func hostileCtx() []byte {
	ctx := make([]byte, ctxSize)
	copy(ctx[0:], "%s %pks %pus %d\x00")
	copy(ctx[32:], "%pI4 %pi6 %c %x\x00")
	for i := 64; i < 96; i++ {
		ctx[i] = '%'
	}
	copy(ctx[96:], "comm\x00")
	for i, v := range []uint64{0, 1, ^uint64(0), 0xffff800000000000, 0x1000, 0x7ffffffff000, 0x8000000000000000, 0xc000000000, 0x400000, 0, 0, 0, 0, 0, 0, 0} {
		binary.LittleEndian.PutUint64(ctx[128+8*i:], v)
	}
	return ctx
}
