package arm64

// SyncICache makes machine code written to [start, end) visible to
// instruction fetch, which on arm64 does not see data-side writes by
// itself: the JIT calls it before code runs (exec_linux_arm64.s).
//
//go:noescape
func SyncICache(start, end uintptr)
