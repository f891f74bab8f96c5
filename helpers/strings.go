package helpers

import "github.com/uebpf/uebpf/vm"

// strncmp is bpf_strncmp(s1, s1_sz, s2): strncmp(s1, s2, s1_sz) with
// Linux's result, -1, 0 or 1. s1 must be s1_sz bytes the run may read, s2
// a string the run may read up to its NUL or s1_sz bytes; otherwise the
// helper returns -EFAULT (Linux's verifier proves both instead).
func strncmp(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	size := uint64(uint32(r2)) // u32 in Linux
	if size == 0 {
		return 0
	}
	s1, ok := env.Bytes(r1, size, false)
	if !ok {
		return retEFAULT
	}
	env.Charge(costCopy(size))
	// s2 usually lies wholly in one region (read-only data): check it
	// once, else byte by byte up to its NUL.
	s2, whole := env.Bytes(r3, size, false)
	for i, c1 := range s1 {
		var c2 byte
		if whole {
			c2 = s2[i]
		} else if p, ok := env.Pointer(r3+uint64(i), 1, false); ok {
			c2 = *(*byte)(p)
		} else {
			return retEFAULT
		}
		if c1 != c2 {
			if c1 < c2 {
				return ^uint64(0) // -1
			}
			return 1
		}
		if c1 == 0 {
			break
		}
	}
	return 0
}
