package maps

import (
	"sync/atomic"
	"unsafe"
)

// Go-side operations of LPM tries.

// goLookup runs under the writers' mutex so that the copied value belongs
// to the prefix found (nodes are recycled).
func (t *lpmTrie) goLookup(key, out []byte) error {
	klen := *(*uint32)(keyPtr(key))
	if klen > t.maxPrefix {
		return t.errs.notExist
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n, _ := t.walk(keyPtr(key), klen)
	if n == nilNode {
		return t.errs.notExist
	}
	atomicCopyOut(out, t.nValue(t.node(n)), t.valStride)
	return nil
}

// goLookupAndDelete: not supported for LPM tries (ENOTSUPP, like Linux).
func (t *lpmTrie) goLookupAndDelete(_, _ []byte) error { return t.errs.notSupp }

func (t *lpmTrie) goUpdate(key, value []byte, flags uint64) error {
	return t.update(keyPtr(key), keyPtr(value), flags, true)
}

func (t *lpmTrie) goDelete(key []byte) error { return t.delete(keyPtr(key)) }

// keysLocked appends the keys of all real nodes in post-order (children
// before parents, child 0 first), the order of trie_get_next_key.
func (t *lpmTrie) keysLocked(n uint32, dst []byte) []byte {
	if n == nilNode {
		return dst
	}
	p := t.node(n)
	dst = t.keysLocked(atomic.LoadUint32(nChild(p, 0)), dst)
	dst = t.keysLocked(atomic.LoadUint32(nChild(p, 1)), dst)
	if atomic.LoadUint32(nFlags(p))&lpmIMFlag == 0 {
		dst = nativeEndian.AppendUint32(dst, atomic.LoadUint32(nPrefix(p)))
		k := len(dst)
		dst = append(dst, make([]byte, t.dataSize)...)
		atomicCopyOut(dst[k:], unsafe.Add(p, lpmDataOf), t.dataSize)
	}
	return dst
}

// goNextKey is trie_get_next_key: the post-order successor of the node
// holding exactly key, or the first node if key is nil or absent.
func (t *lpmTrie) goNextKey(key, next []byte) error {
	t.mu.Lock()
	all := t.keysLocked(t.root.Load(), nil)
	t.mu.Unlock()
	ks := int(t.spec.KeySize)
	i := 0
	if key != nil {
		for j := 0; j+ks <= len(all); j += ks {
			if t.sameKey(all[j:j+ks], key) {
				i = j + ks
				if i >= len(all) {
					return t.errs.notExist
				}
				break
			}
		}
	}
	if i+ks > len(all) {
		return t.errs.notExist
	}
	copy(next, all[i:i+ks])
	return nil
}

// sameKey reports whether two keys name the same prefix.
func (t *lpmTrie) sameKey(a, b []byte) bool {
	la, lb := nativeEndian.Uint32(a), nativeEndian.Uint32(b)
	if la != lb || la > t.maxPrefix {
		return false
	}
	full := la / 8
	for i := uint32(0); i < full; i++ {
		if a[4+i] != b[4+i] {
			return false
		}
	}
	if r := la % 8; r != 0 {
		mask := byte(0xff << (8 - r))
		return a[4+full]&mask == b[4+full]&mask
	}
	return true
}

func (t *lpmTrie) iterKeys(_ uint64, dst []byte) ([]byte, uint64, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keysLocked(t.root.Load(), dst), 0, true, nil
}
