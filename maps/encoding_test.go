package maps

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unsafe"
)

type pair struct {
	A uint32
	B uint32
}

type marshaled struct{ v [8]byte }

func (m marshaled) MarshalBinary() ([]byte, error) { return m.v[:], nil }

func (m *marshaled) UnmarshalBinary(b []byte) error {
	if len(b) != len(m.v) {
		return errors.New("marshaled: need 8 bytes")
	}
	copy(m.v[:], b)
	return nil
}

func (m *marshaled) set(s string) { copy(m.v[:], s) }

func TestEncodingRoundTrip(t *testing.T) {
	m := mustNew(t, &Spec{Name: "e", Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 16})
	var mk marshaled
	mk.set("marshal!")
	ptrKey := uint64(77)
	tests := []struct {
		name     string
		key      any
		value    any
		out      func() any
		check    func(any) bool
		wantFail string
	}{
		{"uint64", uint64(1), uint64(10), func() any { return new(uint64) }, func(o any) bool { return *o.(*uint64) == 10 }, ""},
		{"int64", int64(-2), int64(-20), func() any { return new(int64) }, func(o any) bool { return *o.(*int64) == -20 }, ""},
		{"struct", pair{1, 2}, pair{3, 4}, func() any { return new(pair) }, func(o any) bool { return *o.(*pair) == pair{3, 4} }, ""},
		{"ptr struct", &pair{5, 6}, &pair{7, 8}, func() any { return new(pair) }, func(o any) bool { return *o.(*pair) == pair{7, 8} }, ""},
		{"bytes", []byte("abcdefgh"), []byte("12345678"), func() any { return make([]byte, 8) }, func(o any) bool { return string(o.([]byte)) == "12345678" }, ""},
		{"*[]byte out", []byte("zzzzzzzz"), []byte("87654321"), func() any { return new([]byte) }, func(o any) bool { return string(*o.(*[]byte)) == "87654321" }, ""},
		{"array", [2]uint32{9, 9}, [8]byte{1}, func() any { return new([8]byte) }, func(o any) bool { return *o.(*[8]byte) == [8]byte{1} }, ""},
		{"marshaler", mk, mk, func() any { return new(marshaled) }, func(o any) bool { return o.(*marshaled).v == mk.v }, ""},
		{"unsafe.Pointer", unsafe.Pointer(&ptrKey), uint64(5), func() any { return new(uint64) }, func(o any) bool { return *o.(*uint64) == 5 }, ""},
		{"short key", uint32(1), uint64(1), nil, nil, "uint32 is 4 bytes, want 8"},
		{"long value", uint64(1), [3]uint32{}, nil, nil, "[3]uint32 is 12 bytes, want 8"},
		{"short bytes", []byte("abc"), uint64(1), nil, nil, "[]uint8 is 3 bytes, want 8"},
		{"string", "abcdefgh", uint64(1), nil, nil, "string is not a fixed-size type"},
		{"nil key", nil, uint64(1), nil, nil, "nil, want 8 bytes"},
		{"padded struct", uint64(1), struct {
			A uint8
			B uint32
		}{}, nil, nil, "is 5 bytes, want 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.Update(tt.key, tt.value, UpdateAny)
			if tt.wantFail != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantFail) || !strings.Contains(err.Error(), `map "e"`) {
					t.Fatalf("Update: %v, want error containing %q", err, tt.wantFail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := tt.out()
			if err := m.Lookup(tt.key, out); err != nil {
				t.Fatal(err)
			}
			if !tt.check(out) {
				t.Errorf("round trip: got %v", out)
			}
		})
	}
	var small uint32
	if err := m.Lookup(uint64(1), &small); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "*uint32 is 4 bytes, want 8") {
		t.Errorf("Lookup into *uint32: %v", err)
	}
	if err := m.Lookup(uint64(1), pair{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Lookup into non-pointer: %v", err)
	}
	if err := m.Lookup(uint64(1), nil); err != nil {
		t.Errorf("Lookup into nil: %v", err)
	}
}

// FuzzEncoding: decoding arbitrary bytes into a fixed-size Go value and
// encoding it again gives the same bytes, and nothing panics.
func FuzzEncoding(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(0))
	f.Add([]byte{0xff}, uint8(3))
	f.Add(make([]byte, 16), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		type mixed struct {
			A uint8
			B int16
			C [3]byte
			D uint64
			E uint32 // not float32: encoding/binary decodes struct floats via
			// float64, which quiets signalling NaNs, so bytes would not round-trip
		}
		outs := []any{new(uint8), new(uint16), new(uint32), new(uint64), new(int32), new(pair), new(mixed), new([5]byte),
			new([2]int64), new(marshaled), make([]byte, len(data)), new([]byte), new(float64), new([4]bool)}
		out := outs[int(kind)%len(outs)]
		err := unmarshal(data, out)
		if err != nil {
			if _, isBool := out.(*[4]bool); !isBool && len(data) == sizeOf(out) {
				t.Fatalf("decoding %d bytes into %T: %v", len(data), out, err)
			}
			return
		}
		var in any = out
		if p, ok := out.(*[]byte); ok {
			in = *p
		}
		if p, ok := out.(*marshaled); ok {
			in = *p
		}
		enc, err := marshal(in, len(data))
		if err != nil {
			t.Fatalf("re-encoding %T: %v", out, err)
		}
		if _, isBool := out.(*[4]bool); !isBool && !bytes.Equal(enc, data) {
			t.Fatalf("%T: %x -> %x", out, data, enc)
		}
		// The same through a map of the right size, when it has one.
		if len(data) == 0 || len(data) > 64 {
			return
		}
		m, err := New(&Spec{Name: "f", Type: Hash, KeySize: uint32(len(data)), ValueSize: uint32(len(data)), MaxEntries: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Update(data, in, UpdateAny); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(data))
		if err := m.Lookup(data, got); err != nil || !bytes.Equal(got, enc) {
			t.Fatalf("map round trip: %x %v", got, err)
		}
	})
}

func sizeOf(v any) int {
	switch x := v.(type) {
	case []byte:
		return len(x)
	case *[]byte:
		return -1
	case *marshaled:
		return 8
	}
	return binary.Size(v)
}
