package tracepoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The record codec: how a session's records and the layouts of their
// tracepoints are written into its channel, and read back by whoever
// consumes it (this process, a tool holding the channel's files, the
// recovery of a crashed process's file). Consumers decode here and
// nowhere else: text, JSON lines, CTF and the Go client all start from
// an Event.
//
// A record's body, after the channel's 8-byte header (length, tag):
//
//	u64 timestamp (CLOCK_MONOTONIC ns)
//	i64 vtid      if the tag says it was collected
//	u64 goid      if the tag says it was collected
//	payload       Info.Size bytes, as the payload struct lays them out
//
// The tag is the tracepoint's index among the layouts the session wrote
// (low 24 bits) and the context fields present (high 8 bits). The
// process's own context (pid, name) is in the channel's header: it does
// not change from one record to the next.

// Collected says which costly context fields a record carries beyond its
// timestamp.
type Collected uint8

const (
	// HasVtid: the thread id was collected (some attachment read
	// $ctx.vtid).
	HasVtid Collected = 1 << iota
	// HasGoid: the goroutine id was collected.
	HasGoid
	knownContext = HasVtid | HasGoid
)

const (
	tagIndexBits = 24
	maxLayouts   = 1 << tagIndexBits
)

// recordTag is the tag of a record of layout index with context fields cf.
func recordTag(index uint32, cf Collected) uint32 { return index | uint32(cf)<<tagIndexBits }

// contextSize is the size of the context words a record carries.
func (cf Collected) contextSize() int {
	return 8 + 8*int(cf&HasVtid) + 8*int((cf&HasGoid)>>1)
}

// Event is a decoded record.
type Event struct {
	// Shard is the channel ring the record was in (one per P).
	Shard int
	// Index is its tracepoint's index in the channel's layouts; Info its
	// layout, the same pointer for every record of the channel's reader.
	Index uint32
	Info  *Info
	// TimestampNs is CLOCK_MONOTONIC when the event was recorded.
	TimestampNs uint64
	// Has says which of Vtid and Goid were collected (the others are 0
	// and should be shown as absent).
	Has  Collected
	Vtid int64
	Goid uint64
	// Payload is the payload's bytes (Info.Size of them). Body is the
	// whole record body, from the timestamp to the payload's end. Both
	// may point into the channel's memory: valid only in the callback
	// that got them.
	Payload []byte
	Body    []byte
}

// Tag is the record's tag in its channel: its layout index and context
// fields, as the channel's header holds it.
func (ev *Event) Tag() uint32 { return recordTag(ev.Index, ev.Has) }

// ErrRecord reports a record that does not match its channel's layouts.
var ErrRecord = errors.New("record does not match its layout")

// decodeRecord decodes a record's tag and body with the channel's layouts.
// Everything is checked: body may be shared memory another process writes,
// so each field is read once.
func decodeRecord(layouts []*Info, tag uint32, body []byte, ev *Event) error {
	index, cf := tag&(maxLayouts-1), Collected(tag>>tagIndexBits)
	if int(index) >= len(layouts) {
		return fmt.Errorf("record of layout %d (the channel has %d): %w", index, len(layouts), ErrRecord)
	}
	if cf&^knownContext != 0 {
		return fmt.Errorf("record with context fields %#x: %w", uint8(cf), ErrRecord)
	}
	info := layouts[index]
	n := cf.contextSize()
	if len(body) != n+info.Size {
		return fmt.Errorf("record of %s with %d bytes, want %d: %w", info.FullName(), len(body), n+info.Size, ErrRecord)
	}
	*ev = Event{Index: index, Info: info, Has: cf, Payload: body[n:], Body: body}
	ev.TimestampNs = binary.LittleEndian.Uint64(body)
	off := 8
	if cf&HasVtid != 0 {
		ev.Vtid = int64(binary.LittleEndian.Uint64(body[off:]))
		off += 8
	}
	if cf&HasGoid != 0 {
		ev.Goid = binary.LittleEndian.Uint64(body[off:])
	}
	return nil
}

// Scalar is a field's value as ReadField read it, without an allocation:
// Kind says which member holds it. Valid is false for a field outside
// the payload.
type Scalar struct {
	Kind  Kind
	Valid bool
	Uint  uint64  // Unsigned
	Int   int64   // Signed
	Float float64 // Float (widened from float32)
	Bool  bool
	// Str is a String field's bytes up to the first NUL, as they are
	// (not necessarily UTF-8), in payload.
	Str []byte
}

// ReadField reads field f of payload.
func ReadField(f Field, payload []byte) Scalar {
	v := Scalar{Kind: f.Kind}
	if f.Offset < 0 || f.Size <= 0 || f.Offset > len(payload) || f.Size > len(payload)-f.Offset {
		return v
	}
	b := payload[f.Offset : f.Offset+f.Size]
	switch f.Kind {
	case Unsigned:
		v.Uint, v.Valid = readUint(b), len(b) <= 8
	case Signed:
		shift := 64 - 8*uint(len(b))
		v.Int, v.Valid = int64(readUint(b)<<shift)>>shift, len(b) <= 8
	case Float:
		switch len(b) {
		case 4:
			v.Float, v.Valid = float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
		case 8:
			v.Float, v.Valid = math.Float64frombits(binary.LittleEndian.Uint64(b)), true
		}
	case Bool:
		v.Bool, v.Valid = b[0] != 0, true
	case String:
		v.Str, v.Valid = b, true
		for i, c := range b {
			if c == 0 {
				v.Str = b[:i]
				break
			}
		}
	}
	return v
}

// Value reads field f of payload as a Go value: a uint64 (Unsigned), int64
// (Signed), float64 (Float, widened from float32), bool, or string (the
// bytes up to the first NUL, as they are: not necessarily UTF-8). It
// returns nil for a field outside payload.
func Value(f Field, payload []byte) any {
	v := ReadField(f, payload)
	if !v.Valid {
		return nil
	}
	switch v.Kind {
	case Unsigned:
		return v.Uint
	case Signed:
		return v.Int
	case Float:
		return v.Float
	case Bool:
		return v.Bool
	}
	return string(v.Str)
}

func readUint(b []byte) uint64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return u
}

// Limits of a layout a consumer accepts.
const (
	maxLayoutFields  = 4096
	maxLayoutName    = 255
	maxLayoutPayload = 1 << 20
)

// appendLayout appends the layout entry of info with index to b:
//
//	u32 entry length, u32 index, u32 payload size, u16 name length, name,
//	u16 fields, per field: u16 name length, name, u8 kind, u8 0,
//	u32 size, u32 offset
func appendLayout(b []byte, index uint32, info Info) []byte {
	le := binary.LittleEndian
	start := len(b)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, index)
	b = le.AppendUint32(b, uint32(info.Size))
	b = appendName(b, info.FullName())
	b = le.AppendUint16(b, uint16(len(info.Fields)))
	for _, f := range info.Fields {
		b = appendName(b, f.Name)
		b = append(b, byte(f.Kind), 0)
		b = le.AppendUint32(b, uint32(f.Size))
		b = le.AppendUint32(b, uint32(f.Offset))
	}
	le.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

func appendName(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// ErrLayout reports a layout entry a consumer cannot take.
var ErrLayout = errors.New("bad tracepoint layout in channel")

// parseLayouts reads the layout entries in b and appends them to layouts,
// which they must extend in index order. It returns the bytes it read:
// an entry still being written (it is published whole, so only a hostile
// producer leaves one half) stays for later.
func parseLayouts(b []byte, layouts []*Info) ([]*Info, int, error) {
	le := binary.LittleEndian
	read := 0
	for len(b)-read >= 4 {
		e := b[read:]
		n := int(le.Uint32(e))
		if n < 14 || n > len(e) {
			if n >= 14 && n <= 1<<24 {
				break // not all there yet
			}
			return layouts, read, fmt.Errorf("layout entry of %d bytes: %w", n, ErrLayout)
		}
		info, index, err := parseLayout(e[:n])
		if err != nil {
			return layouts, read, err
		}
		if int(index) != len(layouts) {
			return layouts, read, fmt.Errorf("layout %d after %d: %w", index, len(layouts), ErrLayout)
		}
		if len(layouts) >= maxLayouts {
			return layouts, read, fmt.Errorf("more than %d layouts: %w", maxLayouts, ErrLayout)
		}
		layouts = append(layouts, &info)
		read += n
	}
	return layouts, read, nil
}

// parseLayout reads one entry and checks it: C names, fields of their
// kind's sizes inside the payload.
func parseLayout(e []byte) (Info, uint32, error) {
	d := decoder{b: e, at: 4}
	index, size := d.u32(), d.u32()
	full := d.name()
	nf := int(d.u16())
	if d.err != nil {
		return Info{}, 0, d.err
	}
	provider, name, ok := strings.Cut(full, ":")
	if !ok || !validCName(provider) || !validCName(name) {
		return Info{}, 0, fmt.Errorf("layout %d: name %q: %w", index, full, ErrLayout)
	}
	if size > maxLayoutPayload || nf > maxLayoutFields {
		return Info{}, 0, fmt.Errorf("layout %s: %d-byte payload, %d fields: %w", full, size, nf, ErrLayout)
	}
	info := Info{Provider: provider, Name: name, Size: int(size), Align: 1}
	seen := map[string]bool{}
	for range nf {
		f := Field{Name: d.name()}
		kind := d.u8()
		d.u8()
		f.Size, f.Offset = int(d.u32()), int(d.u32())
		f.Kind = Kind(kind)
		if d.err != nil {
			return Info{}, 0, fmt.Errorf("layout %s: %w", full, d.err)
		}
		if !validCName(f.Name) || seen[f.Name] || !fieldSizeOK(f) || f.Offset < 0 || f.Offset > info.Size-f.Size {
			return Info{}, 0, fmt.Errorf("layout %s: field %q (%v, %d bytes at %d): %w", full, f.Name, f.Kind, f.Size, f.Offset, ErrLayout)
		}
		seen[f.Name] = true
		info.Align = max(info.Align, fieldAlign(f))
		info.Fields = append(info.Fields, f)
	}
	if d.at != len(e) {
		return Info{}, 0, fmt.Errorf("layout %s: %d bytes after its fields: %w", full, len(e)-d.at, ErrLayout)
	}
	return info, index, nil
}

func fieldSizeOK(f Field) bool {
	switch f.Kind {
	case Unsigned, Signed:
		return f.Size == 1 || f.Size == 2 || f.Size == 4 || f.Size == 8
	case Float:
		return f.Size == 4 || f.Size == 8
	case Bool:
		return f.Size == 1
	case String:
		return f.Size >= 1 && f.Size <= maxLayoutPayload
	}
	return false
}

func fieldAlign(f Field) int {
	if f.Kind == String || f.Kind == Bool {
		return 1
	}
	return f.Size
}

// decoder reads little-endian values, stopping at the first short read.
type decoder struct {
	b   []byte
	at  int
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n > len(d.b)-d.at {
		if d.err == nil {
			d.err = fmt.Errorf("layout entry cut short: %w", ErrLayout)
		}
		return make([]byte, n)
	}
	b := d.b[d.at : d.at+n]
	d.at += n
	return b
}

func (d *decoder) u8() uint8   { return d.take(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.take(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }

func (d *decoder) name() string {
	n := int(d.u16())
	if n > maxLayoutName {
		if d.err == nil {
			d.err = fmt.Errorf("name of %d bytes: %w", n, ErrLayout)
		}
		return ""
	}
	return string(d.take(n))
}
