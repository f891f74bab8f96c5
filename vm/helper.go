package vm

// HelperFunc is the Go side of an eBPF helper call: it receives r1..r5 and
// returns r0. It may inspect and change the run through env (read program
// memory with env.Pointer/Bytes, hand out memory with env.AddRegion, end the
// run with env.Stop/Fail, switch programs with env.TailCall). It must not
// keep env after it returns.
type HelperFunc func(env *Env, r1, r2, r3, r4, r5 uint64) uint64

// Helper is a helper function with its name, for messages, and its
// prototype, for the verifier (nil: the verifier refuses calls to it).
type Helper struct {
	Name  string
	Func  HelperFunc
	Proto *Prototype
	// ArrayLookup says the helper is bpf_map_lookup_elem. Engines may then
	// answer calls on array maps (maps.MemoryMap of type maps.Array)
	// themselves, without leaving the program, as the kernel's JITs
	// inline them: r0 = the element's address, or 0 past the end.
	ArrayLookup bool
	// HashLookup, with ArrayLookup, says that engines may also answer
	// calls on the hash maps of package maps (hash, per-CPU hash, LRU
	// hash, LRU per-CPU hash) themselves, exactly as the standard helper does:
	// the map's own lookup, and the value becomes a region of the run
	// (read-only with BPF_F_RDONLY_PROG).
	HashLookup bool
	// HashUpdate says the helper is bpf_map_update_elem: engines may
	// answer calls on the hash maps of package maps themselves, exactly
	// as the standard helper does, and leave
	// every call that fails to the helper, which tries the same update and
	// reports why it failed.
	HashUpdate bool
}

// Helpers maps helper numbers (as in Linux's bpf_func_id) to helpers.
type Helpers map[int32]Helper
