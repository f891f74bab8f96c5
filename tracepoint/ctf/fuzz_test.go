package ctf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/tracepoint"
)

// fuzzInfo builds a tracepoint description from fuzz input: names split
// from names, and for each field 4 bytes of layout (kind, size, offset as
// a uint16).
func fuzzInfo(provider, name, names string, layout []byte) tracepoint.Info {
	info := tracepoint.Info{Provider: provider, Name: name}
	fnames := strings.Split(names, ",")
	for i := 0; i+4 <= len(layout) && i/4 < 64; i += 4 {
		f := tracepoint.Field{
			Kind:   tracepoint.Kind(layout[i] % 6), // 5 is no kind
			Size:   int(layout[i+1]),
			Offset: int(binary.LittleEndian.Uint16(layout[i+2:])) % 2048,
		}
		if f.Kind == tracepoint.String {
			f.Size = int(layout[i+1]) * 16
		}
		f.Name = fnames[i/4%len(fnames)]
		info.Size = max(info.Size, f.Offset+f.Size)
		info.Fields = append(info.Fields, f)
	}
	if len(layout)%4 != 0 { // sometimes a payload too small for its fields
		info.Size -= int(layout[len(layout)-1]) % 4
	}
	return info
}

// FuzzEventLayout lays out arbitrary payload descriptions: newEventClass
// takes or refuses them (with ErrLayout), the metadata of the ones it
// takes is well formed, and their events read back from the stream as
// written: packet headers, event headers and each field's bytes.
func FuzzEventLayout(f *testing.F) {
	f.Add("p", "e", "a,b,c", []byte{0, 8, 0, 0, 1, 4, 8, 0, 4, 1, 12, 0}, []byte("payload"))
	f.Add("prov", "name", "s,string,align,x", []byte{4, 2, 0, 0, 2, 8, 32, 0, 3, 1, 40, 0, 1, 2, 42, 0}, []byte{1, 2, 3})
	f.Add("p", "e", "", []byte{}, []byte{})
	f.Add("p q", "e\"", "a b", []byte{5, 3, 1, 0, 9}, []byte{0xff})
	f.Fuzz(func(t *testing.T, provider, name, names string, layout, payload []byte) {
		info := fuzzInfo(provider, name, names, layout)
		has := tracepoint.Collected(len(names) % 4)
		c, err := newEventClass(0, info, has)
		if err != nil {
			if !errors.Is(err, ErrLayout) {
				t.Fatalf("error %v is not ErrLayout", err)
			}
			return
		}
		w, m := newMemWriter(t, PacketSize(MinPacketSize)) // events of up to 4 KiB in several packets
		if _, err := w.declare(info, has); err != nil {
			if !errors.Is(err, ErrLayout) {
				t.Fatalf("declare: %v", err)
			}
			return
		}
		checkTSDL(t, m.metadata)
		for _, f := range c.fields {
			if !bytes.Contains(m.metadata, []byte(" "+f.name+";")) && !bytes.Contains(m.metadata, []byte(" "+f.name+"[")) {
				t.Fatalf("field %s is not in the metadata:\n%s", f.name, m.metadata)
			}
		}
		p := make([]byte, info.Size)
		for i := range p {
			p[i] = byte(i)
		}
		copy(p, payload)
		const n = 5
		for i := range n {
			b, ts, err := w.room(0, c, uint64(i*10))
			if err != nil {
				t.Fatal(err)
			}
			c.encode(b, ts, -5, 7, p)
			switch {
			case i == 1 && len(layout)%2 == 1:
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			case i == 2:
				w.SetDiscarded(0, uint64(len(payload)))
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b := m.stream.Bytes()
		packets, events, err := readStream(b, []int{c.size})
		if err != nil {
			t.Fatal(err)
		}
		if got := packets[len(packets)-1].Discarded; got != uint64(len(payload)) {
			t.Fatalf("last packet says %d events discarded, want %d", got, len(payload))
		}
		if len(events) != n {
			t.Fatalf("read back %d events, wrote %d", len(events), n)
		}
		for i, e := range events {
			if e.id != 0 || e.ts != uint64(i*10) {
				t.Fatalf("event %d read back as %+v", i, e)
			}
			ctxWords := b[e.offset+evHeaderSize : e.offset+evHeaderSize+c.ctx]
			want := []uint64{}
			if has&tracepoint.HasVtid != 0 {
				want = append(want, uint64(1<<64-5))
			}
			if has&tracepoint.HasGoid != 0 {
				want = append(want, 7)
			}
			for k, v := range want {
				if got := order.Uint64(ctxWords[8*k:]); got != v {
					t.Fatalf("event %d: context word %d is %d, want %d", i, k, got, v)
				}
			}
			for _, f := range c.fields {
				if got, want := b[e.offset+f.dst:][:f.size], p[f.src:][:f.size]; !bytes.Equal(got, want) {
					t.Fatalf("event %d: field %s reads % x, wrote % x", i, f.name, got, want)
				}
			}
		}
	})
}

// checkTSDL checks what a TSDL parser would first trip on: string literals
// closed on their line and braces that balance.
func checkTSDL(t *testing.T, m []byte) {
	t.Helper()
	depth, inString := 0, false
	for i := 0; i < len(m); i++ {
		c := m[i]
		switch {
		case inString && c == '\\':
			i++
		case inString && c == '\n':
			t.Fatalf("string literal across a line at %d:\n%s", i, m)
		case c == '"':
			inString = !inString
		case !inString && c == '{':
			depth++
		case !inString && c == '}':
			if depth--; depth < 0 {
				t.Fatalf("unbalanced } at %d:\n%s", i, m)
			}
		}
	}
	if depth != 0 || inString {
		t.Fatalf("metadata ends inside a block or a string:\n%s", m)
	}
}

// FuzzReadPacketHeader reads arbitrary bytes as a packet: it never panics,
// and a header it accepts writes back as it was.
func FuzzReadPacketHeader(f *testing.F) {
	b := make([]byte, 128)
	h := packetHeader{Magic: Magic, ContentSize: 100 * 8, PacketSize: 128 * 8, TimestampBegin: 1, TimestampEnd: 2}
	h.put(b)
	f.Add(b)
	f.Add(b[:packetHeaderSize])
	f.Add([]byte{0xc1, 0x1f, 0xfc, 0xc1})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := readPacketHeader(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		out := make([]byte, packetHeaderSize)
		h.put(out)
		if !bytes.Equal(out, b[:packetHeaderSize]) {
			t.Fatalf("header % x writes back as % x", b[:packetHeaderSize], out)
		}
	})
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"new\nline\t\x00", `"new?line??"`},
		{"héllo", `"héllo"`},
		{"bad\xffutf8", `"bad?utf8"`},
	} {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
