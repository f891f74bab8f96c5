package maps

import "unsafe"

// HashLookup is the program-side lookup of one of this package's hash maps
// (hash, per-CPU hash, LRU hash, LRU per-CPU hash), for engines that answer
// bpf_map_lookup_elem without going through a helper and the Map
// interface. It behaves exactly like the map's LookupElem.
type HashLookup struct{ h *hashMap }

// HashLookupOf returns the lookup of m, if m is a hash map of this
// package.
func HashLookupOf(m Map) (HashLookup, bool) {
	h, ok := m.(*hashMap)
	return HashLookup{h}, ok
}

// Lookup is LookupElem: the address of the value under key (KeySize
// readable bytes), or nil.
func (l HashLookup) Lookup(key unsafe.Pointer, cpu int) unsafe.Pointer {
	return l.h.LookupElem(key, cpu)
}
