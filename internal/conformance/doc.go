// Package conformance reads the test files of the public eBPF ISA
// conformance suite (bpf_conformance's tests/*.data) and speaks the hex
// format of its plugin protocol.
//
// A .data file holds sections started by "-- NAME" lines: "asm" (the
// program in the dialect of package asm), "mem" (hex bytes given to the
// program), "result" (the expected r0), "raw" (the program as 64-bit
// numbers, one slot each), "error" (an expected error text), and the
// informational "c" and "no register offset". Lines before the first
// section are comments. Test.Instructions gives the program as slots,
// with assembler errors pointing at lines of the file.
//
// The suite lives outside the module, in ../shared/conformance; SharedDir
// finds it, or the directory named by $UEBPF_CONFORMANCE_DIR.
package conformance
