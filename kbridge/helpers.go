package kbridge

import (
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// helperMapLookupElem is bpf_map_lookup_elem, which Helpers overrides.
const helperMapLookupElem = 1

// copier is implemented by maps whose LookupElem returns a copy of the
// value (SyscallMap).
type copier interface {
	maps.Map
	LookupCopies() bool
}

// Helpers returns a copy of set in which bpf_map_lookup_elem hands out the
// values of copying maps (SyscallMap) read-only, so that a program cannot
// write into a copy and lose the write; every other map is looked up by
// set's own helper. Programs that use kernel hash maps must be loaded
// with a helper set passed through Helpers.
func Helpers(set vm.Helpers) vm.Helpers {
	out := make(vm.Helpers, len(set))
	for k, v := range set {
		out[k] = v
	}
	if h, ok := set[helperMapLookupElem]; ok {
		orig := h.Func
		h.Func = func(env *vm.Env, r1, r2, r3, r4, r5 uint64) uint64 {
			if v, ok := env.Map(r1); ok {
				if c, ok := v.(copier); ok && c.LookupCopies() {
					return lookupCopy(env, c, r2)
				}
			}
			return orig(env, r1, r2, r3, r4, r5)
		}
		out[helperMapLookupElem] = h
	}
	return out
}

func lookupCopy(env *vm.Env, m copier, keyAddr uint64) uint64 {
	key, ok := env.Pointer(keyAddr, uint64(m.KeySize()), false)
	if !ok {
		return 0
	}
	v := m.LookupElem(key, env.CPU())
	if v == nil {
		return 0
	}
	env.AddRegion(v, uintptr(m.ValueSize()), false)
	return uint64(uintptr(v))
}
