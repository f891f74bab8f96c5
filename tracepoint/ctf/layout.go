package ctf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/uebpf/uebpf/tracepoint"
)

// Magic is the first word of every packet (CTF 1.8, section 5).
const Magic = 0xC1FC1FC1

// order is the byte order of the trace: the machine's, so that payload
// bytes are copied as they are (byte_order in the metadata says which).
var order = binary.NativeEndian

// The packet header and context, at the start of every packet. Every field
// is naturally aligned (align = size in the metadata), so these offsets
// are what a reader computes.
const (
	offMagic          = 0  // uint32_t magic
	offUUID           = 4  // uint8_t uuid[16]
	offStreamID       = 20 // uint32_t stream_id
	offTimestampBegin = 24 // uint64_clock_monotonic_t timestamp_begin
	offTimestampEnd   = 32 // uint64_clock_monotonic_t timestamp_end
	offContentSize    = 40 // uint64_t content_size, in bits
	offPacketSize     = 48 // uint64_t packet_size, in bits
	offPacketSeqNum   = 56 // uint64_t packet_seq_num
	offDiscarded      = 64 // uint64_t events_discarded
	packetHeaderSize  = 72 // where the first event starts
)

// The event header, in front of every event: its context (the context
// fields its record collected) and its payload follow. An event starts
// 8-byte aligned (its timestamp's alignment), so these offsets from the
// event's start hold for every event, and so does the header's shape as
// a session's record has it: the timestamp, the context words, then the
// payload, as a record's body (tracepoint.Event.Body) lays them out.
const (
	evOffID        = 0  // uint32_t id (then 4 bytes of padding)
	evOffTimestamp = 8  // uint64_clock_monotonic_t timestamp
	evHeaderSize   = 16 // where the event context starts
	eventAlign     = 8
)

// DefaultPacketSize is the size of a packet, what the writer holds in
// memory per stream: 64 KiB, as LTTng's default sub-buffers.
const DefaultPacketSize = 64 << 10

// MinPacketSize is the smallest packet: a header and one small event.
const MinPacketSize = 4096

// align rounds n up to a multiple of a, a power of two.
func align(n, a int) int { return (n + a - 1) &^ (a - 1) }

// field is one payload field as written: where it is in the payload and
// in the event, and its TSDL type.
type field struct {
	name     string // TSDL name, with the leading underscore readers strip
	kind     tracepoint.Kind
	size     int // bytes
	align    int // bytes, in the event
	src, dst int // offsets in the payload and from the event's start
}

// eventClass is one tracepoint, with one set of context fields, as the
// trace describes it.
type eventClass struct {
	id   uint32
	name string // "provider:name"
	has  tracepoint.Collected
	// ctx is the size of the event context: the vtid and goid words the
	// class's records carry.
	ctx    int
	fields []field
	// payloadSize is the payload's size in the records.
	payloadSize int
	// size is the event's size when it starts 8-byte aligned: header,
	// context and fields, without padding after the last field.
	size int
	// direct: every field lies in the event where it lies in the
	// payload, from the end of the context: a record's body is the
	// event after its id, as it is (up to the last field's end).
	direct bool
	// info is the layout WriteEvent's records have (nil for Write's).
	info *tracepoint.Info
}

// ErrLayout reports a payload description the writer cannot write.
var ErrLayout = errors.New("payload layout not writable as CTF")

// newEventClass lays out the event of tracepoint info with context fields
// has: its payload's fields in order, each naturally aligned, after the
// event header and context. It checks info as a reader of the trace would
// need it to be: C names, sizes of the field's kind, fields inside the
// payload.
func newEventClass(id uint32, info tracepoint.Info, has tracepoint.Collected) (*eventClass, error) {
	name := info.FullName()
	if !cName(info.Provider) || !cName(info.Name) {
		return nil, fmt.Errorf("event %q: provider and name must be C identifiers: %w", name, ErrLayout)
	}
	if info.Size < 0 || info.Size > math.MaxInt32 {
		return nil, fmt.Errorf("event %s: payload size %d: %w", name, info.Size, ErrLayout)
	}
	if has&^(tracepoint.HasVtid|tracepoint.HasGoid) != 0 {
		return nil, fmt.Errorf("event %s: context fields %#x: %w", name, uint8(has), ErrLayout)
	}
	c := &eventClass{id: id, name: name, has: has, payloadSize: info.Size, direct: true}
	if has&tracepoint.HasVtid != 0 {
		c.ctx += 8
	}
	if has&tracepoint.HasGoid != 0 {
		c.ctx += 8
	}
	base := evHeaderSize + c.ctx
	pos := base
	seen := map[string]bool{}
	for _, f := range info.Fields {
		if !cName(f.Name) || seen[f.Name] {
			return nil, fmt.Errorf("event %s: field name %q is not a unique C identifier: %w", name, f.Name, ErrLayout)
		}
		seen[f.Name] = true
		a, err := fieldAlign(f)
		if err != nil {
			return nil, fmt.Errorf("event %s: field %s: %w", name, f.Name, err)
		}
		if f.Offset < 0 || f.Offset > info.Size-f.Size {
			return nil, fmt.Errorf("event %s: field %s at %d+%d is outside the %d-byte payload: %w",
				name, f.Name, f.Offset, f.Size, info.Size, ErrLayout)
		}
		pos = align(pos, a)
		c.fields = append(c.fields, field{name: "_" + f.Name, kind: f.Kind, size: f.Size, align: a, src: f.Offset, dst: pos})
		c.direct = c.direct && pos-base == f.Offset
		pos += f.Size
		if pos > math.MaxInt32 {
			return nil, fmt.Errorf("event %s: %d bytes: %w", name, pos, ErrLayout)
		}
	}
	c.size = pos
	return c, nil
}

// fieldAlign checks a field's size for its kind and returns its alignment
// in the event: its size for numbers, 1 for bytes.
func fieldAlign(f tracepoint.Field) (int, error) {
	switch f.Kind {
	case tracepoint.Unsigned, tracepoint.Signed:
		if f.Size == 1 || f.Size == 2 || f.Size == 4 || f.Size == 8 {
			return f.Size, nil
		}
	case tracepoint.Float:
		if f.Size == 4 || f.Size == 8 {
			return f.Size, nil
		}
	case tracepoint.Bool:
		if f.Size == 1 {
			return 1, nil
		}
	case tracepoint.String:
		if f.Size >= 1 && f.Size <= 1<<20 {
			return 1, nil
		}
	}
	return 0, fmt.Errorf("%d-byte %v: %w", f.Size, f.Kind, ErrLayout)
}

// encode writes an event of class c at b[0:c.size], b zeroed, from its
// context words and a payload (len(payload) >= c.payloadSize).
func (c *eventClass) encode(b []byte, ts uint64, vtid int64, goid uint64, payload []byte) {
	_ = b[c.size-1]
	order.PutUint32(b[evOffID:], c.id)
	order.PutUint64(b[evOffTimestamp:], ts)
	off := evHeaderSize
	if c.has&tracepoint.HasVtid != 0 {
		order.PutUint64(b[off:], uint64(vtid))
		off += 8
	}
	if c.has&tracepoint.HasGoid != 0 {
		order.PutUint64(b[off:], goid)
	}
	if c.direct {
		copy(b[evHeaderSize+c.ctx:c.size], payload)
		return
	}
	for i := range c.fields {
		f := &c.fields[i]
		copy(b[f.dst:f.dst+f.size], payload[f.src:f.src+f.size])
	}
}

// encodeBody writes an event of class c from a record's body: the
// timestamp, context words and payload, in the event's order already (a
// direct class copies it as it is). ts is the timestamp to write, which
// may be later than the body's.
func (c *eventClass) encodeBody(b []byte, ts uint64, body []byte) {
	_ = b[c.size-1]
	if !c.direct {
		var vtid int64
		var goid uint64
		off := 8
		if c.has&tracepoint.HasVtid != 0 {
			vtid = int64(order.Uint64(body[off:]))
			off += 8
		}
		if c.has&tracepoint.HasGoid != 0 {
			goid = order.Uint64(body[off:])
		}
		c.encode(b, ts, vtid, goid, body[8+c.ctx:])
		return
	}
	order.PutUint32(b[evOffID:], c.id)
	copy(b[evOffTimestamp:c.size], body)
	order.PutUint64(b[evOffTimestamp:], ts)
}

// packetHeader is what a packet's header and context say.
type packetHeader struct {
	Magic          uint32
	UUID           [16]byte
	StreamID       uint32
	TimestampBegin uint64
	TimestampEnd   uint64
	ContentSize    uint64 // bits
	PacketSize     uint64 // bits
	SeqNum         uint64
	Discarded      uint64
}

// put writes h at the start of a packet.
func (h *packetHeader) put(b []byte) {
	_ = b[packetHeaderSize-1]
	order.PutUint32(b[offMagic:], h.Magic)
	copy(b[offUUID:offUUID+16], h.UUID[:])
	order.PutUint32(b[offStreamID:], h.StreamID)
	order.PutUint64(b[offTimestampBegin:], h.TimestampBegin)
	order.PutUint64(b[offTimestampEnd:], h.TimestampEnd)
	order.PutUint64(b[offContentSize:], h.ContentSize)
	order.PutUint64(b[offPacketSize:], h.PacketSize)
	order.PutUint64(b[offPacketSeqNum:], h.SeqNum)
	order.PutUint64(b[offDiscarded:], h.Discarded)
}

// readPacketHeader reads the packet header at the start of b and checks
// what a reader checks: the magic number, sizes that fit in b, content
// inside the packet.
func readPacketHeader(b []byte) (packetHeader, error) {
	var h packetHeader
	if len(b) < packetHeaderSize {
		return h, fmt.Errorf("packet of %d bytes: shorter than its %d-byte header: %w", len(b), packetHeaderSize, ErrCorrupt)
	}
	h.Magic = order.Uint32(b[offMagic:])
	copy(h.UUID[:], b[offUUID:])
	h.StreamID = order.Uint32(b[offStreamID:])
	h.TimestampBegin = order.Uint64(b[offTimestampBegin:])
	h.TimestampEnd = order.Uint64(b[offTimestampEnd:])
	h.ContentSize = order.Uint64(b[offContentSize:])
	h.PacketSize = order.Uint64(b[offPacketSize:])
	h.SeqNum = order.Uint64(b[offPacketSeqNum:])
	h.Discarded = order.Uint64(b[offDiscarded:])
	switch {
	case h.Magic != Magic:
		return h, fmt.Errorf("packet magic %#x, want %#x: %w", h.Magic, uint32(Magic), ErrCorrupt)
	case h.PacketSize%8 != 0 || h.PacketSize/8 > uint64(len(b)) || h.PacketSize/8 < packetHeaderSize:
		return h, fmt.Errorf("packet size %d bits in %d bytes: %w", h.PacketSize, len(b), ErrCorrupt)
	case h.ContentSize > h.PacketSize || h.ContentSize < packetHeaderSize*8:
		return h, fmt.Errorf("content size %d bits in a %d-bit packet: %w", h.ContentSize, h.PacketSize, ErrCorrupt)
	case h.TimestampEnd < h.TimestampBegin:
		return h, fmt.Errorf("packet ends at %d before it begins at %d: %w", h.TimestampEnd, h.TimestampBegin, ErrCorrupt)
	}
	return h, nil
}

// ErrCorrupt reports a stream file that does not read back as written.
var ErrCorrupt = errors.New("corrupt CTF stream")

// cName reports whether s is a C identifier.
func cName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
