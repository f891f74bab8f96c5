package tracepoint

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestLayoutRoundTrip(t *testing.T) {
	infos := []Info{
		declare[testEvent](t).Info(),
		declare[smallEvent](t).Info(),
		{Provider: "p", Name: "empty", Size: 0, Align: 1},
	}
	var b []byte
	for i, info := range infos {
		b = appendLayout(b, uint32(i), info)
	}
	// Read in two goes, the second entry cut: it waits for the rest.
	cut := len(appendLayout(nil, 0, infos[0])) + 5
	got, n, err := parseLayouts(b[:cut], nil)
	if err != nil || len(got) != 1 || n != cut-5 {
		t.Fatalf("cut: %d layouts, %d bytes, %v", len(got), n, err)
	}
	got, m, err := parseLayouts(b[n:], got)
	if err != nil || n+m != len(b) {
		t.Fatalf("%d bytes of %d, %v", n+m, len(b), err)
	}
	for i := range infos {
		want := infos[i]
		if got[i].FullName() != want.FullName() || got[i].Size != want.Size || !reflect.DeepEqual(got[i].Fields, want.Fields) {
			t.Errorf("layout %d: %+v, want %+v", i, got[i], want)
		}
	}
}

func TestLayoutRefused(t *testing.T) {
	good := appendLayout(nil, 0, declare[testEvent](t).Info())
	le := binary.LittleEndian
	patch := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short entry", patch(func(b []byte) { le.PutUint32(b, 3) })},
		{"index out of order", patch(func(b []byte) { le.PutUint32(b[4:], 7) })},
		{"huge payload", patch(func(b []byte) { le.PutUint32(b[8:], 1<<30) })},
		{"bad name", patch(func(b []byte) { b[14] = '-' })},
		{"field outside payload", patch(func(b []byte) { le.PutUint32(b[8:], 4) })},
		{"bad kind", func() []byte {
			info := declare[testEvent](t).Info()
			info.Fields[0].Kind = 99
			return appendLayout(nil, 0, info)
		}()},
		{"length past the fields", func() []byte {
			b := append(append([]byte(nil), good...), 0, 0, 0, 0)
			le.PutUint32(b, uint32(len(b)))
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := parseLayouts(tc.b, nil); !errors.Is(err, ErrLayout) {
				t.Errorf("parsed: %v", err)
			}
		})
	}
}

func TestDecodeRecord(t *testing.T) {
	info := declare[testEvent](t).Info()
	layouts := []*Info{&info}
	body := make([]byte, 8+8+info.Size)
	binary.LittleEndian.PutUint64(body, 12345)
	binary.LittleEndian.PutUint64(body[8:], 77)
	binary.LittleEndian.PutUint64(body[16:], 5) // seq
	var ev Event
	if err := decodeRecord(layouts, recordTag(0, HasVtid), body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.TimestampNs != 12345 || ev.Vtid != 77 || ev.Has != HasVtid || Value(info.Fields[0], ev.Payload) != uint64(5) {
		t.Errorf("decoded %+v", ev)
	}
	for _, tc := range []struct {
		name string
		tag  uint32
		body []byte
	}{
		{"unknown layout", recordTag(1, HasVtid), body},
		{"unknown context", recordTag(0, 4), body},
		{"short", recordTag(0, HasVtid), body[:len(body)-1]},
		{"long for its context", recordTag(0, 0), body},
	} {
		if err := decodeRecord(layouts, tc.tag, tc.body, &ev); !errors.Is(err, ErrRecord) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestValue(t *testing.T) {
	p := make([]byte, 32)
	binary.LittleEndian.PutUint16(p, 0xfffe)
	binary.LittleEndian.PutUint32(p[4:], math.Float32bits(1.5))
	copy(p[8:], "abc\x00def")
	p[16] = 1
	for _, tc := range []struct {
		f    Field
		want any
	}{
		{Field{Kind: Unsigned, Size: 2, Offset: 0}, uint64(0xfffe)},
		{Field{Kind: Signed, Size: 2, Offset: 0}, int64(-2)},
		{Field{Kind: Float, Size: 4, Offset: 4}, 1.5},
		{Field{Kind: String, Size: 8, Offset: 8}, "abc"},
		{Field{Kind: String, Size: 2, Offset: 8}, "ab"},
		{Field{Kind: Bool, Size: 1, Offset: 16}, true},
		{Field{Kind: Unsigned, Size: 8, Offset: 30}, nil},
		{Field{Kind: Unsigned, Size: 8, Offset: -1}, nil},
	} {
		if got := Value(tc.f, p); got != tc.want {
			t.Errorf("%+v: %#v, want %#v", tc.f, got, tc.want)
		}
	}
}

// FuzzLayouts parses hostile layout bytes: no panic, and what parses
// holds (fields inside payloads, C names).
func FuzzLayouts(f *testing.F) {
	f.Add(appendLayout(nil, 0, Info{Provider: "a", Name: "b", Size: 8, Fields: []Field{{Name: "x", Kind: Unsigned, Size: 8}}}))
	f.Add(appendLayout(appendLayout(nil, 0, Info{Provider: "a", Name: "b"}), 1, Info{Provider: "c", Name: "d", Size: 16,
		Fields: []Field{{Name: "s", Kind: String, Size: 16}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		layouts, n, err := parseLayouts(b, nil)
		if n > len(b) || err == nil && n != len(b) && len(b)-n >= 4 && int(binary.LittleEndian.Uint32(b[n:])) <= len(b)-n {
			t.Fatalf("read %d of %d bytes, %v", n, len(b), err)
		}
		for _, l := range layouts {
			for _, fl := range l.Fields {
				if fl.Offset < 0 || fl.Offset+fl.Size > l.Size || !validCName(fl.Name) {
					t.Fatalf("layout %s: field %+v", l.FullName(), fl)
				}
			}
			payload := make([]byte, l.Size)
			body := make([]byte, 8+l.Size)
			var ev Event
			if err := decodeRecord(layouts, 0, body, &ev); err == nil {
				for _, fl := range ev.Info.Fields {
					Value(fl, payload)
				}
			}
		}
	})
}

// FuzzDecodeRecord decodes hostile records (a tag and a body from shared
// memory another process writes) against a channel's layouts: no panic,
// and a record that decodes has exactly its layout's payload, and fields
// that read inside it.
func FuzzDecodeRecord(f *testing.F) {
	var layouts []*Info
	for _, info := range []Info{
		declare[testEvent](f).Info(),
		declare[smallEvent](f).Info(),
		{Provider: "p", Name: "empty", Align: 1},
	} {
		layouts = append(layouts, &info)
	}
	body := make([]byte, 8+8+layouts[0].Size)
	f.Add(recordTag(0, HasVtid), body)
	f.Add(recordTag(1, 0), make([]byte, 8+layouts[1].Size))
	f.Add(recordTag(2, HasVtid|HasGoid), make([]byte, 24))
	f.Add(uint32(0xffffffff), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, tag uint32, body []byte) {
		var d Decoder
		d.layouts = layouts
		var ev Event
		if err := d.Decode(tag, body, &ev); err != nil {
			if d.Bad() != 1 {
				t.Fatal("a refused record was not counted")
			}
			return
		}
		if len(ev.Payload) != ev.Info.Size || len(ev.Body) != len(body) || ev.Tag() != tag {
			t.Fatalf("decoded %+v from a %d-byte body, tag %#x", ev, len(body), tag)
		}
		for _, fl := range ev.Info.Fields {
			if v := ReadField(fl, ev.Payload); !v.Valid {
				t.Fatalf("field %+v of a decoded record does not read", fl)
			}
		}
	})
}

// FuzzChannelReader is a consumer reading a session's file whose bytes
// are hostile: a real session's channel, the fuzzer's bytes written over
// it where the fuzzer says (the header, the layouts, the rings), parsed
// and read to its end. Nothing may panic or fail to end; every event
// handed out matches its layout.
func FuzzChannelReader(f *testing.F) {
	tp := declare[testEvent](f)
	small := declare[smallEvent](f)
	s, err := NewSession(&SessionOptions{BufferSize: 8192})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	for _, t := range []Target{tp, small} {
		if _, err := s.Enable(t, WithThreadID()); err != nil {
			f.Fatal(err)
		}
	}
	for i := range 100 {
		tp.Fire(&testEvent{Seq: uint64(i)})
		small.Fire(&smallEvent{N: uint8(i)})
	}
	base := append([]byte(nil), s.ch.ReaderBytes()...)
	dataOff := int(binary.LittleEndian.Uint64(base[48:]))
	f.Add(uint32(0), []byte{})
	f.Add(uint32(4096), []byte{0xff, 0xff, 0, 0}) // the layouts
	f.Add(uint32(dataOff), []byte{0x18, 0, 0, 0, 9, 0, 0, 1})
	f.Add(uint32(dataOff+48), []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(uint32(128+16), []byte{0, 0, 0, 0, 0, 0, 0, 0x80}) // a head
	f.Fuzz(func(t *testing.T, at uint32, patch []byte) {
		b := append([]byte(nil), base...)
		if int(at) < len(b) {
			copy(b[at:], patch)
		}
		r, err := ParseChannel(b)
		if err != nil {
			return
		}
		for range 16 {
			n, err := r.ReadAll(0, func(ev *Event) {
				if len(ev.Payload) != ev.Info.Size || len(ev.Body) != ev.Has.contextSize()+ev.Info.Size {
					t.Fatalf("an event of %d payload bytes for a %d-byte layout", len(ev.Payload), ev.Info.Size)
				}
			})
			if err != nil || n == 0 {
				break
			}
		}
		r.Stats()
	})
}
