package maps

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"
)

// FuzzHashOps runs a random sequence of operations on a hash map and on a Go
// map model: results and contents must agree and nothing may panic.
func FuzzHashOps(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 0, 1, 1, 3, 3, 1, 0, 4, 1, 2, 0})
	f.Add([]byte{3, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5})
	f.Add(bytes.Repeat([]byte{0, 7, 9, 200}, 40))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		keySizes := []uint32{1, 3, 4, 8, 12}
		cfg := ops[0]
		ops = ops[1:]
		ks := keySizes[int(cfg)%len(keySizes)]
		max := uint32(cfg>>3)%8 + 1
		var flags uint32
		typ := Hash
		lru := cfg&0x40 != 0
		if lru {
			typ = LRUHash // the model learns about evictions as it goes
		} else if cfg&0x80 != 0 {
			flags = FlagNoPrealloc
		}
		m, err := New(&Spec{Name: "fz", Type: typ, KeySize: ks, ValueSize: 5, MaxEntries: max, Flags: flags})
		if err != nil {
			t.Fatal(err)
		}
		model := map[string][]byte{}
		mkKey := func(b byte) []byte {
			k := make([]byte, ks)
			k[0] = b % 16
			k[ks-1] ^= (b % 16) << 4
			return k
		}
		for len(ops) >= 3 {
			op, kb, vb := ops[0]%8, ops[1], ops[2]
			ops = ops[3:]
			key := mkKey(kb)
			val := []byte{vb, vb + 1, vb + 2, vb + 3, vb + 4}
			if lru { // drop keys the map evicted
				for k := range model {
					if m.Lookup([]byte(k), nil) != nil {
						delete(model, k)
					}
				}
			}
			cur, exists := model[string(key)]
			full := uint32(len(model)) >= max && !lru
			switch op {
			case 0, 1, 2, 3: // update: Go side (0-2 with flags 0..2), program side (3)
				fl := UpdateFlags(op % 3)
				if op == 3 {
					fl = UpdateFlags(vb % 3)
					err = m.UpdateElem(unsafe.Pointer(&key[0]), unsafe.Pointer(&val[0]), uint64(fl), 0)
				} else {
					err = m.Update(key, val, fl)
				}
				var want error
				switch {
				case fl == UpdateNoExist && exists:
					want = ErrKeyExist
				case fl == UpdateExist && !exists:
					want = ErrKeyNotExist
				case !exists && full:
					want = ErrMapFull
				}
				if !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("update(%x, %v): %v, want %v", key, fl, err, want)
				}
				if err == nil {
					model[string(key)] = val
				}
			case 4: // delete
				if op4 := vb % 2; op4 == 0 {
					err = m.Delete(key)
				} else {
					err = m.DeleteElem(unsafe.Pointer(&key[0]))
				}
				if exists != (err == nil) || (!exists && !errors.Is(err, ErrKeyNotExist)) {
					t.Fatalf("delete(%x): %v, exists %v", key, err, exists)
				}
				delete(model, string(key))
			case 5: // lookup, both sides
				out := make([]byte, 5)
				err = m.Lookup(key, out)
				p := m.LookupElem(unsafe.Pointer(&key[0]), 0)
				if exists != (err == nil) || exists != (p != nil) {
					t.Fatalf("lookup(%x): %v %v, exists %v", key, err, p, exists)
				}
				if exists && (!bytes.Equal(out, cur) || !bytes.Equal(unsafe.Slice((*byte)(p), 5), cur)) {
					t.Fatalf("lookup(%x) = %x, want %x", key, out, cur)
				}
			case 6: // lookup and delete
				out := make([]byte, 5)
				err = m.LookupAndDelete(key, out)
				if exists != (err == nil) || exists && !bytes.Equal(out, cur) {
					t.Fatalf("lookupAndDelete(%x) = %x %v", key, out, err)
				}
				delete(model, string(key))
			case 7: // next key from key: must be a present key
				next := make([]byte, ks)
				err = m.NextKey(key, next)
				if err == nil {
					if _, ok := model[string(next)]; !ok {
						t.Fatalf("NextKey returned absent key %x", next)
					}
				} else if !errors.Is(err, ErrKeyNotExist) {
					t.Fatal(err)
				}
			}
		}
		if lru {
			for k := range model {
				if m.Lookup([]byte(k), nil) != nil {
					delete(model, k)
				}
			}
		}
		got := map[string][]byte{}
		k, v := make([]byte, ks), make([]byte, 5)
		it := m.Iterate()
		for it.Next(k, v) {
			if _, dup := got[string(k)]; dup {
				t.Fatalf("key %x iterated twice", k)
			}
			got[string(k)] = bytes.Clone(v)
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		if len(got) != len(model) {
			t.Fatalf("map has %d keys, model %d", len(got), len(model))
		}
		for k, v := range model {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("key %x: %x, model %x", k, got[k], v)
			}
		}
		n := 0
		var nk []byte
		for err := m.NextKey(nil, k); err == nil; err = m.NextKey(nk, k) {
			nk = bytes.Clone(k)
			if n++; n > len(model) {
				t.Fatal("NextKey walk longer than the map")
			}
		}
		if n != len(model) {
			t.Fatalf("NextKey walked %d keys, want %d", n, len(model))
		}
	})
}

// FuzzLPMOps checks the trie against a brute-force longest-prefix model.
func FuzzLPMOps(f *testing.F) {
	f.Add([]byte{0, 8, 10, 1, 0, 16, 10, 2, 2, 24, 10, 3})
	f.Add([]byte{0, 0, 0, 1, 0, 32, 255, 2, 1, 32, 255, 0, 2, 1, 128, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const max = 12
		m, err := New(&Spec{Name: "lpm", Type: LPMTrie, KeySize: 6, ValueSize: 4, MaxEntries: max, Flags: FlagNoPrealloc})
		if err != nil {
			t.Fatal(err)
		}
		type prefix struct {
			plen uint32
			data uint16
		}
		norm := func(p prefix) prefix {
			if p.plen < 16 {
				p.data &= ^uint16(0) << (16 - p.plen)
			}
			return p
		}
		model := map[prefix]uint32{}
		key := func(p prefix) []byte {
			b := nativeEndian.AppendUint32(nil, p.plen)
			return append(b, byte(p.data>>8), byte(p.data))
		}
		for i := 0; len(ops) >= 4; i++ {
			op, plen := ops[0]%3, uint32(ops[1])%18 // 17: invalid
			p := prefix{plen, uint16(ops[2])<<8 | uint16(ops[3])}
			ops = ops[4:]
			k := key(p)
			switch op {
			case 0:
				err := m.Update(k, uint32(i), UpdateAny)
				_, exists := model[norm(p)]
				switch {
				case plen > 16:
					if !errors.Is(err, ErrInvalid) {
						t.Fatalf("update /%d: %v", plen, err)
					}
				case !exists && len(model) == max:
					if !errors.Is(err, ErrMapFull) {
						t.Fatalf("update of full trie: %v", err)
					}
				case err != nil:
					t.Fatalf("update %v: %v", p, err)
				default:
					model[norm(p)] = uint32(i)
				}
			case 1:
				err := m.Delete(k)
				_, exists := model[norm(p)]
				if exists != (err == nil) {
					t.Fatalf("delete %v: %v, exists %v", p, err, exists)
				}
				delete(model, norm(p))
			case 2:
				var got uint32
				err := m.Lookup(k, &got)
				best, found := prefix{}, false
				if plen <= 16 {
					for q := range model {
						if q.plen <= plen && norm(prefix{q.plen, p.data}) == q && (!found || q.plen > best.plen) {
							best, found = q, true
						}
					}
				}
				if found != (err == nil) || found && got != model[best] {
					t.Fatalf("lookup %v: %d %v; model %v %v", p, got, err, best, found)
				}
				ptr := m.LookupElem(unsafe.Pointer(&k[0]), 0)
				if found != (ptr != nil) || found && *(*uint32)(ptr) != model[best] {
					t.Fatalf("LookupElem %v disagrees", p)
				}
			}
		}
		n := 0
		var kk []byte
		var v uint32
		for it := m.Iterate(); it.Next(&kk, &v); n++ {
			q := norm(prefix{nativeEndian.Uint32(kk), uint16(kk[4])<<8 | uint16(kk[5])})
			if mv, ok := model[q]; !ok || mv != v {
				t.Fatalf("iterated %v=%d, model %d %v", q, v, mv, ok)
			}
		}
		if n != len(model) {
			t.Fatalf("iterated %d prefixes, model %d", n, len(model))
		}
	})
}
