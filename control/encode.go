package control

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/uebpf/uebpf/tracepoint"
)

// Events are written as JSON lines and as text by hand, straight from the
// decoded record (tracepoint.Event): streaming is where a consumer's cost
// per event matters, and encoding/json's reflection over a value of
// interfaces costs several times more. JSON lines are what
// json.Marshal(Event) writes, which the tests check.

// origin is what a channel says of its records: the session, and the
// process, whose pid, name and clock are the same for every record.
type origin struct {
	session     uint64
	pid         int64
	procname    string
	clockOffset int64 // CLOCK_REALTIME - CLOCK_MONOTONIC there
}

// appendEventJSON appends ev as an Event's JSON: "ts" is the event's wall
// time in ns since the Unix epoch (the application's clock), the context
// fields not collected are absent, and so is the session unless session
// is set.
func appendEventJSON(b []byte, o *origin, ev *tracepoint.Event, session bool) []byte {
	b = append(b, '{')
	if session {
		b = append(b, `"session":`...)
		b = strconv.AppendUint(b, o.session, 10)
		b = append(b, ',')
	}
	b = append(b, `"tp":`...)
	b = appendString(b, ev.Info.FullName())
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, int64(ev.TimestampNs)+o.clockOffset, 10)
	b = append(b, `,"vpid":`...)
	b = strconv.AppendInt(b, o.pid, 10)
	b = append(b, `,"procname":`...)
	b = appendString(b, o.procname)
	if ev.Has&tracepoint.HasVtid != 0 {
		b = append(b, `,"vtid":`...)
		b = strconv.AppendInt(b, ev.Vtid, 10)
	}
	if ev.Has&tracepoint.HasGoid != 0 {
		b = append(b, `,"goid":`...)
		b = strconv.AppendUint(b, ev.Goid, 10)
	}
	b = append(b, `,"fields":{`...)
	for i, f := range ev.Info.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.Name)
		b = append(b, ':')
		b = appendFieldJSON(b, tracepoint.ReadField(f, ev.Payload))
	}
	return append(b, "}}"...)
}

// appendFieldJSON appends a field's value as JSON: integers exact, floats
// JSON cannot hold as the strings "NaN", "+Inf", "-Inf".
func appendFieldJSON(b []byte, v tracepoint.Scalar) []byte {
	if !v.Valid {
		return append(b, "null"...)
	}
	switch v.Kind {
	case tracepoint.Unsigned:
		return strconv.AppendUint(b, v.Uint, 10)
	case tracepoint.Signed:
		return strconv.AppendInt(b, v.Int, 10)
	case tracepoint.Float:
		if s := nonFinite(v.Float); s != "" {
			return append(append(append(b, '"'), s...), '"')
		}
		return strconv.AppendFloat(b, v.Float, 'g', -1, 64)
	case tracepoint.Bool:
		return strconv.AppendBool(b, v.Bool)
	}
	return appendString(b, v.Str)
}

// nonFinite names the floats JSON has no number for.
func nonFinite(f float64) string {
	switch {
	case f != f:
		return "NaN"
	case f > 1.7976931348623157e308:
		return "+Inf"
	case f < -1.7976931348623157e308:
		return "-Inf"
	}
	return ""
}

// textClock caches the wall time's part that changes once a second.
type textClock struct {
	sec    int64
	prefix []byte // "[15:04:05."
}

// appendEventTime appends an event's wall time (the application's clock)
// as 'lttng view' shows it: "[15:04:05.123456789] ".
func appendEventTime(b []byte, tc *textClock, o *origin, ts uint64) []byte {
	wall := int64(ts) + o.clockOffset
	sec, ns := wall/1e9, wall%1e9
	if ns < 0 {
		sec, ns = sec-1, ns+1e9
	}
	if sec != tc.sec || tc.prefix == nil {
		tc.sec = sec
		tc.prefix = time.Unix(sec, 0).AppendFormat(tc.prefix[:0], "[15:04:05.")
	}
	b = append(b, tc.prefix...)
	b = appendPadded(b, uint64(ns), 9)
	return append(b, "] "...)
}

// appendEventText appends the rest of ev's text line, after its time and
// the time since the one before: the session if session is set, name,
// context and fields.
func appendEventText(b []byte, o *origin, ev *tracepoint.Event, session bool) []byte {
	if session {
		b = append(b, "session "...)
		b = strconv.AppendUint(b, o.session, 10)
		b = append(b, ' ')
	}
	b = append(b, ev.Info.FullName()...)
	b = append(b, ": { vpid = "...)
	b = strconv.AppendInt(b, o.pid, 10)
	b = append(b, ", procname = "...)
	b = strconv.AppendQuote(b, o.procname)
	if ev.Has&tracepoint.HasVtid != 0 {
		b = append(b, ", vtid = "...)
		b = strconv.AppendInt(b, ev.Vtid, 10)
	}
	if ev.Has&tracepoint.HasGoid != 0 {
		b = append(b, ", goid = "...)
		b = strconv.AppendUint(b, ev.Goid, 10)
	}
	b = append(b, " }, { "...)
	for i, f := range ev.Info.Fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, f.Name...)
		b = append(b, " = "...)
		v := tracepoint.ReadField(f, ev.Payload)
		switch {
		case !v.Valid:
			b = append(b, '?')
		case v.Kind == tracepoint.String:
			b = strconv.AppendQuote(b, string(v.Str))
		default:
			b = appendFieldJSON(b, v)
		}
	}
	return append(b, " }"...)
}

// appendPadded appends n in decimal with at least width digits.
func appendPadded(b []byte, n uint64, width int) []byte {
	var d [20]byte
	i := len(d)
	for n > 0 || len(d)-i < width {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[i:]...)
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
