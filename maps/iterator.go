package maps

import "errors"

// Iterator iterates over a map's keys and values, like cilium/ebpf's
// MapIterator:
//
//	it := m.Iterate()
//	for it.Next(&key, &value) {
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// Iteration works on batches of keys taken from the map (a hash bucket at a
// time, a range of indices for arrays), so concurrent updates and deletes
// never make it restart or abort: a key deleted before it is reached is
// skipped, keys added during iteration may or may not be seen, and no key
// present during the whole iteration is missed or returned twice.
type Iterator struct {
	b      *base
	keys   []byte
	pos    int
	cursor uint64
	done   bool
	err    error
	vbuf   []byte
}

// valueIterator is implemented by maps whose values are not bytes (program
// arrays).
type valueIterator interface {
	iterValue(key []byte, valueOut any) (found bool, err error)
}

// Next decodes the next key and value into keyOut and valueOut (either may
// be nil) and reports whether there was one. After it returns false, Err
// says whether iteration ended because of an error.
func (it *Iterator) Next(keyOut, valueOut any) bool {
	if it.err != nil {
		return false
	}
	ks := int(it.b.spec.KeySize)
	for {
		if it.pos+ks > len(it.keys) || ks == 0 {
			if it.done {
				return false
			}
			keys, next, done, err := it.b.ops.iterKeys(it.cursor, it.keys[:0])
			if err != nil {
				it.err = it.b.wrapf(err, "iterate")
				return false
			}
			it.keys, it.cursor, it.done, it.pos = keys, next, done, 0
			continue
		}
		k := it.keys[it.pos : it.pos+ks]
		it.pos += ks
		if vi, ok := it.b.ops.(valueIterator); ok {
			found, err := vi.iterValue(k, valueOut)
			if err != nil {
				it.err = it.b.wrapf(err, "iterate")
				return false
			}
			if !found {
				continue
			}
		} else {
			if it.vbuf == nil {
				it.vbuf = make([]byte, it.b.sysValueSize())
			}
			if err := it.b.ops.goLookup(k, it.vbuf); err != nil {
				if errors.Is(err, ErrKeyNotExist) {
					continue // deleted since its bucket was read
				}
				it.err = it.b.wrapf(err, "iterate")
				return false
			}
			if err := it.b.unmarshalValue(it.vbuf, valueOut, "iterate"); err != nil {
				it.err = err
				return false
			}
		}
		if err := it.b.unmarshalKey(k, keyOut, "iterate"); err != nil {
			it.err = err
			return false
		}
		return true
	}
}

// Err returns the error that ended iteration, if any.
func (it *Iterator) Err() error { return it.err }
