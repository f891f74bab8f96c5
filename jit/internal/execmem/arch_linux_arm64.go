package execmem

import "github.com/uebpf/uebpf/jit/internal/arm64"

// sharedCode is false on arm64: each program gets private pages. Code
// written through the memory file is invisible to qemu-user, which keeps
// running what it translated from a reused slot (it sees only writes by
// the program's own instructions), and qemu is where the arm64 back end
// is tested.
const sharedCode = false

// fillByte makes every unused word 0, a permanently undefined instruction.
const fillByte = 0

// syncICache makes the written code visible to instruction fetch.
func syncICache(start, end uintptr) { arm64.SyncICache(start, end) }
