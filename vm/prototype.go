package vm

// ArgKind says what a helper argument must be. The verifier checks calls
// against it; the engines ignore it. The kinds follow Linux's
// bpf_arg_type.
type ArgKind uint8

const (
	ArgNone            ArgKind = iota // the helper takes no more arguments
	ArgAnything                       // any initialised value
	ArgScalar                         // a number, not a pointer
	ArgMapPointer                     // a map reference (lddw of a map)
	ArgMapKey                         // pointer to KeySize readable bytes of the map in the previous map argument
	ArgMapValue                       // pointer to ValueSize readable bytes of that map
	ArgMemory                         // pointer to readable memory whose size is the next argument
	ArgUninitMemory                   // pointer to writable memory, size in the next argument, that the helper fills
	ArgConstSize                      // the size of the previous memory argument: a known, positive number
	ArgConstSizeOrZero                // the same, zero allowed
	ArgContext                        // the program's context pointer
	ArgFunction                       // a callback: the address of a function of the program (lddw BPF_PSEUDO_FUNC)
	ArgConstString                    // pointer to a NUL-terminated string in read-only memory
	ArgReleasedRecord                 // a record an earlier call acquired (ring buffer reserve), released by this call
)

// ReturnKind says what a helper returns in r0.
type ReturnKind uint8

const (
	RetInteger              ReturnKind = iota // a number
	RetVoid                                   // nothing: r0 is undefined afterwards
	RetMapValueOrNull                         // pointer to a value of the map argument, or 0
	RetMemoryOrNull                           // pointer to RetSize bytes (or the size in ArgConstSize), or 0
	RetAcquiredRecordOrNull                   // like RetMemoryOrNull, and the program must release it (ring buffer reserve)
)

// Prototype is a helper's typed signature, as in Linux's bpf_func_proto.
type Prototype struct {
	Args [5]ArgKind
	Ret  ReturnKind
	// RetSizeArg is the index of the argument holding the size of the
	// memory returned (RetMemoryOrNull, RetAcquiredRecordOrNull), or -1
	// when RetSize gives it.
	RetSizeArg int
	RetSize    int
	// GPLOnly helpers may only be called by programs with a GPL-compatible
	// license.
	GPLOnly bool
}
