// Package execmem hands out executable memory for the JIT's machine code.
//
// Code lives in the pages of one memory file (memfd_create), mapped
// read-execute and never writable: code is written into the file with
// pwrite, which the mapping sees at once (on arm64 after an instruction
// cache sync). So no page of the process is ever writable and executable
// (W^X), and loading a program costs no mprotect: making pages executable
// again after writing them costs a TLB shootdown on every CPU that runs a
// thread of the process, the largest part of a small program's load time.
//
// Programs share pages: each gets a slot of a power-of-two size of at
// least 256 bytes (larger than 64 KiB: its own mapping), and a freed slot
// is reused by the next program of its size. Where memory files cannot be
// mapped executable (vm.memfd_noexec, seccomp), and on arm64 (see
// sharedCode), each program gets private pages, filled read-write and
// flipped to read-execute.
//
// Code is mapped in the 128 GiB-aligned region of the Go code that calls
// it (place_linux.go): on AMD Zen 4 a call across such regions costs
// about 0.8 ns more, half of a call of the shortest program from Go.
package execmem
