package ctf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/tracepoint"
)

// memTrace is a trace written in memory: stream is the first stream,
// others the rest by index.
type memTrace struct {
	stream   bytes.Buffer
	others   map[int]*bytes.Buffer
	metadata []byte
}

func (m *memTrace) Close() error { return nil }

// newMemWriter returns a writer into a memTrace.
func newMemWriter(t testing.TB, opts ...Option) (*Writer, *memTrace) {
	t.Helper()
	w, err := newWriter("mem", opts)
	if err != nil {
		t.Fatal(err)
	}
	m := &memTrace{others: map[int]*bytes.Buffer{}}
	w.create = func(i int) (io.WriteCloser, error) {
		b := &m.stream
		if i > 0 {
			b = new(bytes.Buffer)
			m.others[i] = b
		}
		return struct {
			io.Writer
			io.Closer
		}{b, m}, nil
	}
	w.meta = func(b []byte) error { m.metadata = bytes.Clone(b); return nil }
	if err := w.writeMetadata(); err != nil {
		t.Fatal(err)
	}
	return w, m
}

// readEvent is an event read back from a stream.
type readEvent struct {
	id     uint32
	ts     uint64
	offset int // in the stream
}

// readStream reads a stream back as a reader would, given the size of
// each event class (by id): every packet's header, and every event's
// header.
func readStream(b []byte, sizes []int) ([]packetHeader, []readEvent, error) {
	var (
		packets []packetHeader
		events  []readEvent
		lastTs  uint64
	)
	for off := 0; off < len(b); {
		h, err := readPacketHeader(b[off:])
		if err != nil {
			return packets, events, fmt.Errorf("packet at %d: %w", off, err)
		}
		if h.SeqNum != uint64(len(packets)) {
			return packets, events, fmt.Errorf("packet at %d: sequence number %d, want %d", off, h.SeqNum, len(packets))
		}
		p := b[off : off+int(h.PacketSize/8)]
		content := int(h.ContentSize / 8)
		if bytes.ContainsFunc(p[content:], func(r rune) bool { return r != 0 }) {
			return packets, events, fmt.Errorf("packet at %d: padding after its content is not zeros", off)
		}
		for pos := packetHeaderSize; pos < content; {
			pos = align(pos, eventAlign)
			if pos+evHeaderSize > content {
				return packets, events, fmt.Errorf("event at %d: header past the content", off+pos)
			}
			e := readEvent{
				id:     order.Uint32(p[pos+evOffID:]),
				ts:     order.Uint64(p[pos+evOffTimestamp:]),
				offset: off + pos,
			}
			if int(e.id) >= len(sizes) {
				return packets, events, fmt.Errorf("event at %d: id %d of no class", off+pos, e.id)
			}
			if e.ts < h.TimestampBegin || e.ts > h.TimestampEnd || e.ts < lastTs {
				return packets, events, fmt.Errorf("event at %d: timestamp %d out of order (packet %d..%d, last %d)",
					off+pos, e.ts, h.TimestampBegin, h.TimestampEnd, lastTs)
			}
			lastTs = e.ts
			pos += sizes[e.id]
			if pos > content {
				return packets, events, fmt.Errorf("event at %d: %d bytes past the content", e.offset, pos-content)
			}
			events = append(events, e)
		}
		packets = append(packets, h)
		off += len(p)
	}
	return packets, events, nil
}

func TestPacketHeaderOffsets(t *testing.T) {
	// The offsets the writer uses are the ones natural alignment gives the
	// metadata's packet.header and packet.context, in order.
	type decl struct {
		name       string
		size, want int
	}
	pos := 0
	for _, d := range []decl{
		{"magic", 4, offMagic}, {"uuid", 16, offUUID}, {"stream_id", 4, offStreamID},
		{"timestamp_begin", 8, offTimestampBegin}, {"timestamp_end", 8, offTimestampEnd},
		{"content_size", 8, offContentSize}, {"packet_size", 8, offPacketSize},
		{"packet_seq_num", 8, offPacketSeqNum}, {"events_discarded", 8, offDiscarded},
	} {
		a := d.size
		if d.name == "uuid" {
			a = 1
		}
		pos = align(pos, a)
		if pos != d.want {
			t.Errorf("%s at %d, writer puts it at %d", d.name, pos, d.want)
		}
		pos += d.size
	}
	if pos != packetHeaderSize {
		t.Errorf("header and context end at %d, writer starts events at %d", pos, packetHeaderSize)
	}
	// The event header, from an 8-byte aligned start.
	pos = 0
	for _, d := range []decl{{"id", 4, evOffID}, {"timestamp", 8, evOffTimestamp}} {
		pos = align(pos, d.size)
		if pos != d.want {
			t.Errorf("%s at %d, writer puts it at %d", d.name, pos, d.want)
		}
		pos += d.size
	}
	if pos != evHeaderSize {
		t.Errorf("event header ends at %d, writer starts contexts at %d", pos, evHeaderSize)
	}
}

func TestPacketHeaderRoundTrip(t *testing.T) {
	b := make([]byte, 4096)
	h := packetHeader{Magic: Magic, UUID: [16]byte{1, 2, 3, 15: 16}, StreamID: 7, TimestampBegin: 10, TimestampEnd: 20,
		ContentSize: 800 * 8, PacketSize: 4096 * 8, SeqNum: 3, Discarded: 5}
	h.put(b)
	got, err := readPacketHeader(b)
	if err != nil || got != h {
		t.Fatalf("read back %+v, %v; wrote %+v", got, err, h)
	}
	for _, tc := range []struct {
		name string
		mod  func(*packetHeader)
	}{
		{"magic", func(h *packetHeader) { h.Magic = 0xC1FC1FC0 }},
		{"packet larger than the data", func(h *packetHeader) { h.PacketSize = 4097 * 8 }},
		{"packet not whole bytes", func(h *packetHeader) { h.PacketSize = 4000*8 + 1 }},
		{"content past the packet", func(h *packetHeader) { h.ContentSize = h.PacketSize + 8 }},
		{"content shorter than the header", func(h *packetHeader) { h.ContentSize = 8 }},
		{"time going back", func(h *packetHeader) { h.TimestampEnd = 9 }},
	} {
		bad := h
		tc.mod(&bad)
		bad.put(b)
		if _, err := readPacketHeader(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
	if _, err := readPacketHeader(b[:packetHeaderSize-1]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short packet: %v, want ErrCorrupt", err)
	}
}

func TestEventClassLayout(t *testing.T) {
	f := func(name string, k tracepoint.Kind, size, off int) tracepoint.Field {
		return tracepoint.Field{Name: name, Kind: k, Size: size, Offset: off}
	}
	for _, tc := range []struct {
		name   string
		info   tracepoint.Info
		has    tracepoint.Collected
		dst    []int // payload field offsets from the event's start
		size   int
		direct bool // copied as the record has it
		errSub string
	}{
		{name: "empty", info: tracepoint.Info{Provider: "p", Name: "e"}, size: evHeaderSize, direct: true},
		{name: "bytes packed", info: tracepoint.Info{Provider: "p", Name: "e", Size: 19, Fields: []tracepoint.Field{
			f("s", tracepoint.String, 17, 0), f("b", tracepoint.Bool, 1, 17), f("u", tracepoint.Unsigned, 1, 18)}},
			dst: []int{16, 33, 34}, size: 35, direct: true},
		{name: "natural alignment", info: tracepoint.Info{Provider: "p", Name: "e", Size: 32, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 1, 0), f("b", tracepoint.Signed, 2, 2), f("c", tracepoint.Float, 4, 4),
			f("d", tracepoint.Signed, 1, 8), f("e", tracepoint.Float, 8, 16), f("f", tracepoint.Unsigned, 8, 24)}},
			dst: []int{16, 18, 20, 24, 32, 40}, size: 48, direct: true},
		{name: "after vtid and goid", has: tracepoint.HasVtid | tracepoint.HasGoid, info: tracepoint.Info{Provider: "p", Name: "e", Size: 16, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 1, 0), f("b", tracepoint.Unsigned, 8, 8)}},
			dst: []int{32, 40}, size: 48, direct: true},
		{name: "after goid", has: tracepoint.HasGoid, info: tracepoint.Info{Provider: "p", Name: "e", Size: 4, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 4, 0)}},
			dst: []int{24}, size: 28, direct: true},
		{name: "padding in the payload is not written", info: tracepoint.Info{Provider: "p", Name: "e", Size: 32, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 1, 0), f("b", tracepoint.Unsigned, 1, 31)}},
			dst: []int{16, 17}, size: 18},
		{name: "keyword names", info: tracepoint.Info{Provider: "p", Name: "e", Size: 2, Fields: []tracepoint.Field{
			f("string", tracepoint.Unsigned, 1, 0), f("align", tracepoint.Unsigned, 1, 1)}},
			dst: []int{16, 17}, size: 18, direct: true},
		{name: "bad context", has: 4, info: tracepoint.Info{Provider: "p", Name: "e"}, errSub: "context fields"},
		{name: "bad provider", info: tracepoint.Info{Provider: "p-q", Name: "e"}, errSub: "C identifiers"},
		{name: "3-byte integer", info: tracepoint.Info{Provider: "p", Name: "e", Size: 4, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 3, 0)}}, errSub: "3-byte unsigned"},
		{name: "2-byte float", info: tracepoint.Info{Provider: "p", Name: "e", Size: 2, Fields: []tracepoint.Field{
			f("a", tracepoint.Float, 2, 0)}}, errSub: "2-byte float"},
		{name: "unknown kind", info: tracepoint.Info{Provider: "p", Name: "e", Size: 2, Fields: []tracepoint.Field{
			f("a", tracepoint.Kind(9), 2, 0)}}, errSub: "Kind(9)"},
		{name: "outside the payload", info: tracepoint.Info{Provider: "p", Name: "e", Size: 4, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 4, 1)}}, errSub: "outside"},
		{name: "negative offset", info: tracepoint.Info{Provider: "p", Name: "e", Size: 4, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 1, -1)}}, errSub: "outside"},
		{name: "two fields named a", info: tracepoint.Info{Provider: "p", Name: "e", Size: 4, Fields: []tracepoint.Field{
			f("a", tracepoint.Unsigned, 1, 0), f("a", tracepoint.Unsigned, 1, 1)}}, errSub: "unique"},
		{name: "not a C name", info: tracepoint.Info{Provider: "p", Name: "e", Size: 4, Fields: []tracepoint.Field{
			f("a b", tracepoint.Unsigned, 1, 0)}}, errSub: "C identifier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newEventClass(3, tc.info, tc.has)
			if tc.errSub != "" {
				if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("err %v, want ErrLayout saying %q", err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var dst []int
			for _, f := range c.fields {
				dst = append(dst, f.dst)
				if f.dst%f.align != 0 {
					t.Errorf("field %s at %d is not %d-aligned", f.name, f.dst, f.align)
				}
			}
			if fmt.Sprint(dst) != fmt.Sprint(tc.dst) || c.size != tc.size || c.direct != tc.direct {
				t.Errorf("fields at %v, size %d, direct %t; want %v, %d, %t", dst, c.size, c.direct, tc.dst, tc.size, tc.direct)
			}
		})
	}
}

// rec is a record of p with payload and timestamp ts.
func rec(p *tracepoint.Point, ts uint64, payload []byte) tracepoint.Record {
	return tracepoint.Record{Tracepoint: p, Payload: payload, Context: tracepoint.Context{TimestampNs: ts, Vpid: 1, Vtid: int64(ts)}}
}

type layoutEv struct {
	A uint64
	B [21]byte
	_ [3]byte
}

var layoutTP = tracepoint.New[layoutEv]("ctftest_layout", "ev")

func TestPacketTrimming(t *testing.T) {
	const packetSize = MinPacketSize
	// Each event is 16 + 8 + 21 = 45 bytes, 48 with the padding to the
	// next: 83 fit in a packet after its 72-byte header (72 + 82*48 + 45 =
	// 4053; one more would end at 4101).
	const perPacket = 83
	for _, n := range []int{0, 1, perPacket - 1, perPacket, perPacket + 1, 3*perPacket + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w, m := newMemWriter(t, PacketSize(packetSize))
			payload := make([]byte, 32)
			for i := range n {
				payload[0] = byte(i)
				if err := w.Write(rec(&layoutTP.Point, uint64(1000+i), payload)); err != nil {
					t.Fatal(err)
				}
				if len(w.streams[0].packet) != packetSize {
					t.Fatalf("writer holds a %d-byte packet, want %d", len(w.streams[0].packet), packetSize)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b := m.stream.Bytes()
			packets, events, err := readStream(b, []int{45})
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != n {
				t.Fatalf("read back %d events, wrote %d", len(events), n)
			}
			wantPackets := (n + perPacket - 1) / perPacket
			if len(packets) != wantPackets {
				t.Fatalf("%d packets, want %d", len(packets), wantPackets)
			}
			for i, h := range packets {
				inPacket := min(perPacket, n-i*perPacket)
				content := uint64(packetHeaderSize+(inPacket-1)*48+45) * 8
				if h.ContentSize != content {
					t.Errorf("packet %d: content size %d bits, want %d", i, h.ContentSize, content)
				}
				last := i == len(packets)-1
				if !last && h.PacketSize != packetSize*8 || last && h.PacketSize != h.ContentSize {
					t.Errorf("packet %d of %d: packet size %d bits for %d of content", i, len(packets), h.PacketSize, h.ContentSize)
				}
				if first := uint64(1000 + i*perPacket); h.TimestampBegin != first || h.TimestampEnd != first+uint64(inPacket-1) {
					t.Errorf("packet %d: timestamps %d..%d, want %d..%d", i, h.TimestampBegin, h.TimestampEnd, first, first+uint64(inPacket-1))
				}
			}
			if n > 0 {
				if want := (wantPackets-1)*packetSize + int(packets[len(packets)-1].ContentSize/8); len(b) != want {
					t.Errorf("stream of %d bytes, want %d", len(b), want)
				}
			}
		})
	}
}

func TestTimestampsNeverGoBack(t *testing.T) {
	w, m := newMemWriter(t, PacketSize(MinPacketSize))
	payload := make([]byte, 32)
	for _, ts := range []uint64{100, 90, 200, 150, 300} {
		if err := w.Write(rec(&layoutTP.Point, ts, payload)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	_, events, err := readStream(m.stream.Bytes(), []int{45})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, e := range events {
		got = append(got, e.ts)
	}
	if want := "[100 100 200 200 300]"; fmt.Sprint(got) != want {
		t.Errorf("timestamps %v, want %v", got, want)
	}
}

func TestWriteErrors(t *testing.T) {
	w, _ := newMemWriter(t)
	if err := w.Write(tracepoint.Record{}); err == nil {
		t.Error("record of no tracepoint written")
	}
	if err := w.Write(rec(&layoutTP.Point, 1, make([]byte, 3))); err == nil || !strings.Contains(err.Error(), "ctftest_layout:ev") {
		t.Errorf("short payload: %v, want an error naming the event", err)
	}
	w.Close()
	if err := w.Write(rec(&layoutTP.Point, 1, make([]byte, 32))); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

type bigEv struct{ S [8000]byte }

func TestEventLargerThanPacket(t *testing.T) {
	tp, err := tracepoint.Declare[bigEv]("ctftest_big", "ev")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := newMemWriter(t, PacketSize(MinPacketSize))
	err = w.Write(rec(&tp.Point, 1, make([]byte, 8000)))
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "ctftest_big:ev") {
		t.Errorf("%v, want ErrLayout naming the event", err)
	}
}

func TestWriteAllocs(t *testing.T) {
	w, _ := newMemWriter(t, PacketSize(MinPacketSize))
	payload := make([]byte, 32)
	r := rec(&layoutTP.Point, 1, payload)
	w.Write(r)
	// Flushing a packet into the bytes.Buffer may grow it: the writer
	// itself allocates nothing per event.
	if n := testing.AllocsPerRun(40, func() { w.Write(r) }); n != 0 {
		t.Errorf("%v allocations per event", n)
	}
}

func TestCreateOverExistingTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, err = Create(dir)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), filepath.Join(dir, StreamFile)) {
		t.Errorf("second Create in %s: %v, want fs.ErrExist naming the stream file", dir, err)
	}
}
