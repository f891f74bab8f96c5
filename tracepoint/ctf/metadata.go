package ctf

import (
	"fmt"
	"strings"

	"github.com/uebpf/uebpf/tracepoint"
)

// traceInfo is what the metadata says about the trace as a whole.
type traceInfo struct {
	uuid      [16]byte
	hostname  string
	procname  string
	vpid      int64
	clockOff  int64 // CLOCK_REALTIME - CLOCK_MONOTONIC in ns
	clockDesc string
	streamID  uint32
}

// metadata writes the trace's TSDL description (CTF 1.8, plain text
// form) declaring classes, in id order.
func metadata(t *traceInfo, classes []*eventClass) []byte {
	var b strings.Builder
	bo := "le"
	if order.Uint16([]byte{0, 1}) == 1 { // big endian
		bo = "be"
	}
	u := uuidString(t.uuid)
	fmt.Fprintf(&b, `/* CTF 1.8 */
/* Written by uebpf (package tracepoint/ctf). */

typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 16; signed = false; } := uint16_t;
typealias integer { size = 32; align = 32; signed = false; } := uint32_t;
typealias integer { size = 64; align = 64; signed = false; } := uint64_t;

trace {
	major = 1;
	minor = 8;
	uuid = "%s";
	byte_order = %s;
	packet.header := struct {
		uint32_t magic;
		uint8_t uuid[16];
		uint32_t stream_id;
	};
};

env {
	hostname = %s;
	domain = "ust";
	tracer_name = "uebpf";
	tracer_major = 1;
	tracer_minor = 0;
	procname = %s;
	vpid = %d;
};

`, u, bo, quote(t.hostname), quote(t.procname), t.vpid)
	sec, ns := t.clockOff/1e9, t.clockOff%1e9
	if ns < 0 {
		sec, ns = sec-1, ns+1e9
	}
	fmt.Fprintf(&b, `clock {
	name = "monotonic";
	uuid = "%s";
	description = %s;
	freq = 1000000000;
	precision = 1;
	offset_s = %d;
	offset = %d;
	absolute = true;
};

typealias integer {
	size = 64; align = 64; signed = false;
	map = clock.monotonic.value;
} := uint64_clock_monotonic_t;

stream {
	id = %d;
	packet.context := struct {
		uint64_clock_monotonic_t timestamp_begin;
		uint64_clock_monotonic_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t packet_seq_num;
		uint64_t events_discarded;
	};
	event.header := struct {
		uint32_t id;
		uint64_clock_monotonic_t timestamp;
	};
};
`, u, quote(t.clockDesc), sec, ns, t.streamID)
	for _, c := range classes {
		fmt.Fprintf(&b, "\nevent {\n\tname = %s;\n\tid = %d;\n\tstream_id = %d;\n", quote(c.name), c.id, t.streamID)
		if c.has != 0 {
			b.WriteString("\tcontext := struct {\n")
			if c.has&tracepoint.HasVtid != 0 {
				b.WriteString("\t\tinteger { size = 64; align = 64; signed = true; } _vtid;\n")
			}
			if c.has&tracepoint.HasGoid != 0 {
				b.WriteString("\t\tuint64_t _goid;\n")
			}
			b.WriteString("\t};\n")
		}
		b.WriteString("\tfields := struct {\n")
		for _, f := range c.fields {
			fmt.Fprintf(&b, "\t\t%s;\n", fieldDecl(f))
		}
		b.WriteString("\t};\n};\n")
	}
	return []byte(b.String())
}

// fieldDecl is the TSDL declaration of a payload field.
func fieldDecl(f field) string {
	bits := f.size * 8
	switch f.kind {
	case tracepoint.Unsigned, tracepoint.Signed:
		return fmt.Sprintf("integer { size = %d; align = %d; signed = %t; } %s", bits, bits, f.kind == tracepoint.Signed, f.name)
	case tracepoint.Float:
		exp, mant := 8, 24 // IEEE 754 binary32: mant_dig counts the implicit bit
		if f.size == 8 {
			exp, mant = 11, 53
		}
		return fmt.Sprintf("floating_point { exp_dig = %d; mant_dig = %d; align = %d; } %s", exp, mant, bits, f.name)
	case tracepoint.Bool:
		return fmt.Sprintf(`enum : integer { size = 8; align = 8; signed = false; } { "false" = 0, "true" = 1 } %s`, f.name)
	case tracepoint.String:
		return fmt.Sprintf("integer { size = 8; align = 8; signed = false; encoding = UTF8; } %s[%d]", f.name, f.size)
	}
	panic(fmt.Sprintf("ctf: field %s of kind %v", f.name, f.kind)) // newEventClass checked the kinds
}

// quote writes s as a TSDL string literal. Readers differ in the escapes
// they take, so only \" and \\ are escaped and other control characters
// become '?'.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == '\uFFFD':
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// uuidString formats a UUID as the metadata writes it.
func uuidString(u [16]byte) string {
	const hex = "0123456789abcdef"
	var b []byte
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&15])
	}
	return string(b)
}
