package maps

import (
	"errors"
	"net/netip"
	"testing"
	"unsafe"
)

// lpmKey4 is an IPv4 LPM key.
type lpmKey4 struct {
	Prefixlen uint32
	Addr      [4]byte
}

func pfx(s string) lpmKey4 {
	p := netip.MustParsePrefix(s)
	return lpmKey4{uint32(p.Bits()), p.Addr().As4()}
}

func addr(s string) lpmKey4 { return lpmKey4{32, netip.MustParseAddr(s).As4()} }

func newLPM(t testing.TB, max uint32) Map {
	return mustNew(t, &Spec{Name: "lpm", Type: LPMTrie, KeySize: 8, ValueSize: 4, MaxEntries: max, Flags: FlagNoPrealloc})
}

func TestLPMLongestMatch(t *testing.T) {
	m := newLPM(t, 16)
	routes := map[string]uint32{
		"0.0.0.0/0":        1,
		"10.0.0.0/8":       2,
		"10.1.0.0/16":      3,
		"10.1.2.0/24":      4,
		"10.1.2.3/32":      5,
		"192.168.0.0/16":   6,
		"192.168.128.0/17": 7,
		"10.128.0.0/9":     8,
	}
	for p, v := range routes {
		if err := m.Update(pfx(p), v, UpdateNoExist); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	tests := []struct {
		key  lpmKey4
		want uint32 // 0: no match
	}{
		{addr("10.1.2.3"), 5},
		{addr("10.1.2.4"), 4},
		{addr("10.1.3.1"), 3},
		{addr("10.2.0.1"), 2},
		{addr("10.200.0.1"), 8},
		{addr("11.0.0.1"), 1},
		{addr("192.168.1.1"), 6},
		{addr("192.168.200.1"), 7},
		{pfx("10.1.2.3/20"), 3}, // the key's prefixlen limits the match
		{pfx("10.1.2.3/12"), 2},
		{pfx("10.1.2.3/24"), 4},
		{pfx("10.1.0.0/16"), 3},
		{pfx("10.1.0.0/15"), 2},
		{pfx("1.2.3.4/0"), 1},
		{lpmKey4{33, [4]byte{10}}, 0}, // prefixlen > 32
	}
	for _, tt := range tests {
		var got uint32
		err := m.Lookup(tt.key, &got)
		if tt.want == 0 {
			if !errors.Is(err, ErrKeyNotExist) {
				t.Errorf("%v: got %d, %v; want no match", tt.key, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: got %d, %v; want %d", tt.key, got, err, tt.want)
		}
		k := tt.key
		if p := m.LookupElem(unsafe.Pointer(&k), 0); p == nil || *(*uint32)(p) != tt.want {
			t.Errorf("%v: LookupElem disagrees", tt.key)
		}
	}
	// Delete the default route and a middle prefix.
	if err := m.Delete(pfx("0.0.0.0/0")); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(pfx("10.1.0.0/16")); err != nil {
		t.Fatal(err)
	}
	var got uint32
	if err := m.Lookup(addr("11.0.0.1"), &got); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("after deleting /0: %d, %v", got, err)
	}
	if err := m.Lookup(addr("10.1.3.1"), &got); err != nil || got != 2 {
		t.Errorf("after deleting 10.1/16: %d, %v", got, err)
	}
	if err := m.Delete(pfx("10.1.0.0/16")); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("second delete: %v", err)
	}
	if err := m.Delete(pfx("10.1.0.0/17")); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("delete of absent prefix: %v", err)
	}
}

func TestLPMFlagsAndFull(t *testing.T) {
	m := newLPM(t, 2)
	steps := []struct {
		key   string
		flags UpdateFlags
		want  error
	}{
		{"10.0.0.0/8", UpdateExist, ErrKeyNotExist},
		{"10.0.0.0/8", UpdateNoExist, nil},
		{"10.0.0.0/8", UpdateNoExist, ErrKeyExist},
		{"10.0.0.0/8", UpdateExist, nil},
		{"10.0.0.0/8", 3, ErrInvalid},
		{"11.0.0.0/8", UpdateAny, nil},
		{"12.0.0.0/8", UpdateAny, ErrMapFull},
		{"10.0.0.0/8", UpdateAny, nil},
	}
	for i, s := range steps {
		err := m.Update(pfx(s.key), uint32(i), s.flags)
		if !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Fatalf("step %d: %v, want %v", i, err, s.want)
		}
	}
	// An intermediate node (8.0.0.0/6 above 10/8 and 11/8... here 10/8 and
	// 11/8 branch at /7) does not count, and becomes real on insert.
	if err := m.Delete(pfx("11.0.0.0/8")); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(pfx("10.0.0.0/7"), uint32(7), UpdateNoExist); err != nil {
		t.Fatal(err)
	}
	var v uint32
	if err := m.Lookup(addr("11.1.1.1"), &v); err != nil || v != 7 {
		t.Errorf("lookup under /7: %d, %v", v, err)
	}
	bad := lpmKey4{Prefixlen: 33}
	if err := m.Update(bad, uint32(1), UpdateAny); !errors.Is(err, ErrInvalid) {
		t.Errorf("prefixlen 33: %v", err)
	}
	if err := m.UpdateElem(unsafe.Pointer(&bad), unsafe.Pointer(&v), 0, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("UpdateElem prefixlen 33: %v", err)
	}
	full := pfx("12.0.0.0/8")
	err := m.UpdateElem(unsafe.Pointer(&full), unsafe.Pointer(&v), 0, 0)
	if !errors.Is(err, ErrMapFull) || Errno(err) != -28 {
		t.Errorf("full trie: %v (errno %d), want ENOSPC", err, Errno(err))
	}
}

func TestLPMIntermediateNodes(t *testing.T) {
	m := newLPM(t, 8)
	// 192.168.0.0/24 and 192.168.1.0/24 branch at /23: an intermediate node.
	_ = m.Update(pfx("192.168.0.0/24"), uint32(1), UpdateAny)
	_ = m.Update(pfx("192.168.1.0/24"), uint32(2), UpdateAny)
	var v uint32
	if err := m.Lookup(pfx("192.168.0.0/23"), &v); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("intermediate node matched: %d %v", v, err)
	}
	if err := m.Delete(pfx("192.168.0.0/23")); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("intermediate node deleted: %v", err)
	}
	if err := m.Update(pfx("192.168.0.0/23"), uint32(3), UpdateExist); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("UpdateExist on intermediate: %v", err)
	}
	if err := m.Update(pfx("192.168.0.0/23"), uint32(3), UpdateNoExist); err != nil {
		t.Fatal(err)
	}
	if err := m.Lookup(addr("192.168.1.9"), &v); err != nil || v != 2 {
		t.Errorf("lookup: %d %v", v, err)
	}
	// Node with two children becomes intermediate on delete.
	if err := m.Delete(pfx("192.168.0.0/23")); err != nil {
		t.Fatal(err)
	}
	if err := m.Lookup(pfx("192.168.0.0/23"), &v); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("deleted node still matches: %d %v", v, err)
	}
	// Leaf under an intermediate parent: the parent goes too.
	if err := m.Delete(pfx("192.168.0.0/24")); err != nil {
		t.Fatal(err)
	}
	if err := m.Lookup(addr("192.168.1.9"), &v); err != nil || v != 2 {
		t.Errorf("sibling lost: %d %v", v, err)
	}
	tr := m.(*lpmTrie)
	if len(tr.free) != 2 {
		t.Errorf("%d free nodes, want 2 (leaf and intermediate parent)", len(tr.free))
	}
}

func TestLPMIterate(t *testing.T) {
	m := newLPM(t, 16)
	prefixes := []string{"10.0.0.0/8", "10.1.0.0/16", "10.2.0.0/16", "0.0.0.0/0", "192.168.0.0/16"}
	for i, p := range prefixes {
		_ = m.Update(pfx(p), uint32(i), UpdateAny)
	}
	seen := map[lpmKey4]uint32{}
	var k lpmKey4
	var v uint32
	it := m.Iterate()
	for it.Next(&k, &v) {
		seen[k] = v
	}
	if it.Err() != nil || len(seen) != len(prefixes) {
		t.Fatalf("iterated %v: %v", seen, it.Err())
	}
	for i, p := range prefixes {
		if got, ok := seen[pfx(p)]; !ok || got != uint32(i) {
			t.Errorf("%s: %d %v", p, got, ok)
		}
	}
	// NextKey: post-order, children before parents.
	var order []lpmKey4
	var next lpmKey4
	err := m.NextKey(nil, &next)
	for err == nil {
		order = append(order, next)
		err = m.NextKey(next, &next)
	}
	if !errors.Is(err, ErrKeyNotExist) || len(order) != len(prefixes) {
		t.Fatalf("NextKey walk %v: %v", order, err)
	}
	pos := map[lpmKey4]int{}
	for i, k := range order {
		pos[k] = i
	}
	if pos[pfx("10.1.0.0/16")] > pos[pfx("10.0.0.0/8")] || pos[pfx("10.0.0.0/8")] > pos[pfx("0.0.0.0/0")] {
		t.Errorf("not post-order: %v", order)
	}
	if err := m.NextKey(pfx("172.16.0.0/12"), &next); err != nil || next != order[0] {
		t.Errorf("NextKey(absent) = %v %v, want first", next, err)
	}
}

func TestLPMWideKeys(t *testing.T) {
	// IPv6-sized keys exercise multi-word comparisons.
	m := mustNew(t, &Spec{Name: "v6", Type: LPMTrie, KeySize: 20, ValueSize: 8, MaxEntries: 64, Flags: FlagNoPrealloc})
	key := func(s string) []byte {
		p := netip.MustParsePrefix(s)
		b := nativeEndian.AppendUint32(nil, uint32(p.Bits()))
		a := p.Addr().As16()
		return append(b, a[:]...)
	}
	routes := []string{"2001:db8::/32", "2001:db8:1::/48", "2001:db8:1:2::/64", "2001:db8:1:2:3::/80", "::/0", "2001:db8:1:2:3:4:5:6/128"}
	for i, r := range routes {
		if err := m.Update(key(r), uint64(i), UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]uint64{
		"2001:db8:1:2:3:4:5:6/128": 5, "2001:db8:1:2:3:4:5:7/128": 3, "2001:db8:1:2:4::/128": 2,
		"2001:db8:1:3::/128": 1, "2001:db8:2::/128": 0, "2002::/128": 4,
	}
	for k, want := range tests {
		var v uint64
		if err := m.Lookup(key(k), &v); err != nil || v != want {
			t.Errorf("%s: %d %v, want %d", k, v, err, want)
		}
	}
}
