package execmem

// sharedCode: programs share the memory file's pages.
const sharedCode = true

// fillByte is int3.
const fillByte = 0xcc

// syncICache has nothing to do: x86 instruction fetch sees data writes.
func syncICache(start, end uintptr) {}
