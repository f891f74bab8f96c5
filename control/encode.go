package control

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/uebpf/uebpf/tracepoint"
)

// Events are encoded by hand, not with encoding/json: streaming is the one
// path where the server's cost per event matters, and reflection over
// []FieldValue of interfaces costs several times more. The output is what
// json.Marshal(Event) writes, which the tests check.

// appendEvent appends rec as an Event's JSON.
func appendEvent(b []byte, rec *tracepoint.Record, name string, fields []tracepoint.Field) []byte {
	b = append(b, `{"tp":`...)
	b = appendString(b, name)
	b = append(b, `,"ts":`...)
	b = strconv.AppendUint(b, rec.Context.TimestampNs, 10)
	b = append(b, `,"vtid":`...)
	b = strconv.AppendInt(b, rec.Context.Vtid, 10)
	b = append(b, `,"vpid":`...)
	b = strconv.AppendInt(b, rec.Context.Vpid, 10)
	b = append(b, `,"goid":`...)
	b = strconv.AppendUint(b, rec.Context.Goid, 10)
	b = append(b, `,"procname":`...)
	b = appendString(b, cString(rec.Context.Procname[:]))
	b = append(b, `,"fields":{`...)
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.Name)
		b = append(b, ':')
		b = appendField(b, rec.Payload, f)
	}
	return append(b, "}}"...)
}

// appendField appends the JSON value of field f of payload. Fields come
// from the tracepoint's own description, so they lie inside the payload;
// a short payload is still checked rather than trusted.
func appendField(b, payload []byte, f tracepoint.Field) []byte {
	if f.Offset < 0 || f.Size <= 0 || f.Offset+f.Size > len(payload) {
		return append(b, "null"...)
	}
	v := payload[f.Offset : f.Offset+f.Size]
	switch f.Kind {
	case tracepoint.Unsigned:
		return strconv.AppendUint(b, readUint(v), 10)
	case tracepoint.Signed:
		u := readUint(v)
		shift := 64 - 8*uint(len(v))
		return strconv.AppendInt(b, int64(u<<shift)>>shift, 10)
	case tracepoint.Float:
		var x float64
		bits := 64
		if len(v) == 4 {
			x, bits = float64(math.Float32frombits(binary.LittleEndian.Uint32(v))), 32
		} else if len(v) == 8 {
			x = math.Float64frombits(binary.LittleEndian.Uint64(v))
		} else {
			return append(b, "null"...)
		}
		switch {
		case math.IsNaN(x):
			return append(b, `"NaN"`...)
		case math.IsInf(x, 1):
			return append(b, `"+Inf"`...)
		case math.IsInf(x, -1):
			return append(b, `"-Inf"`...)
		}
		return strconv.AppendFloat(b, x, 'g', -1, bits)
	case tracepoint.Bool:
		if v[0] != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case tracepoint.String:
		return appendString(b, cString(v))
	}
	return append(b, "null"...)
}

// readUint reads a little-endian unsigned integer of 1 to 8 bytes.
func readUint(v []byte) uint64 {
	var u uint64
	for i := len(v) - 1; i >= 0; i-- {
		u = u<<8 | uint64(v[i])
	}
	return u
}

// cString is v up to its first NUL.
func cString(v []byte) []byte {
	if i := bytes.IndexByte(v, 0); i >= 0 {
		return v[:i]
	}
	return v
}

// appendString appends s as a JSON string: invalid UTF-8 becomes U+FFFD,
// as encoding/json writes it.
func appendString[S ~string | ~[]byte](b []byte, s S) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&15])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
