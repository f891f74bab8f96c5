package maps

import "unsafe"

// DirectHash is the program-side access to one of this package's hash maps
// (hash, per-CPU hash, LRU hash, LRU per-CPU hash), for engines that answer
// bpf_map_lookup_elem and bpf_map_update_elem without going through a
// helper and the Map interface. Its methods behave exactly like the map's
// LookupElem and UpdateElem.
type DirectHash struct{ h *hashMap }

// DirectHashOf returns the direct access to m, if m is a hash map of this
// package.
func DirectHashOf(m Map) (DirectHash, bool) {
	h, ok := m.(*hashMap)
	return DirectHash{h}, ok
}

// Lookup is LookupElem: the address of the value under key (KeySize
// readable bytes), or nil.
func (d DirectHash) Lookup(key unsafe.Pointer, cpu int) unsafe.Pointer {
	return d.h.LookupElem(key, cpu)
}

// Update is UpdateElem: it stores the ValueSize bytes at value under key
// (KeySize bytes), as flags allow.
func (d DirectHash) Update(key, value unsafe.Pointer, flags uint64, cpu int) error {
	return d.h.UpdateElem(key, value, flags, cpu)
}
