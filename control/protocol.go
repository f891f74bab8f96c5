package control

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Version is the protocol version this package speaks.
const Version = 1

// MaxFrameSize bounds a frame's body: a larger length prefix is refused
// before anything is allocated for it.
const MaxFrameSize = 16 << 20

// Operations of requests (Request.Op).
const (
	OpHello      = "hello"
	OpList       = "list"
	OpEnable     = "enable"
	OpDisable    = "disable"
	OpStream     = "stream"
	OpStop       = "stop"
	OpStats      = "stats"
	OpMapLookup  = "map_lookup"
	OpMapUpdate  = "map_update"
	OpMapDelete  = "map_delete"
	OpMapIterate = "map_iterate"
)

// Error codes of responses (Response.Code), matched by the sentinel errors
// below through RemoteError.Is.
const (
	CodeBadRequest = "bad_request"
	CodeNotFound   = "not_found"
	CodeRefused    = "refused"
	CodeBusy       = "busy"
	CodeLimit      = "limit"
	CodeVersion    = "version"
	CodeDenied     = "denied"
	CodeInternal   = "internal"
)

// Sentinel errors a client's errors wrap, by the server's error code.
var (
	ErrBadRequest = errors.New("bad request")
	ErrNotFound   = errors.New("not found")
	// ErrRefused: the program or filter did not compile, load or verify;
	// the message is the compiler's, loader's or verifier's.
	ErrRefused = errors.New("refused")
	ErrBusy    = errors.New("busy")
	ErrLimit   = errors.New("limit reached")
	ErrVersion = errors.New("protocol version not supported")
	// ErrDenied: the peer's uid may not use the socket.
	ErrDenied   = errors.New("permission denied")
	ErrInternal = errors.New("internal error")
)

var codeErrors = map[string]error{
	CodeBadRequest: ErrBadRequest,
	CodeNotFound:   ErrNotFound,
	CodeRefused:    ErrRefused,
	CodeBusy:       ErrBusy,
	CodeLimit:      ErrLimit,
	CodeVersion:    ErrVersion,
	CodeDenied:     ErrDenied,
	CodeInternal:   ErrInternal,
}

// RemoteError is an error reply of the server.
type RemoteError struct {
	Op      string
	Code    string
	Message string
}

func (e *RemoteError) Error() string {
	// The server's messages often start with the op already.
	msg := strings.TrimPrefix(e.Message, e.Op+": ")
	return fmt.Sprintf("control: %s: %s (%s)", e.Op, msg, e.Code)
}

// Is matches the sentinel error of e's code.
func (e *RemoteError) Is(target error) bool { return codeErrors[e.Code] == target }

// Request is a client's message. Op says which of the other fields count.
type Request struct {
	// ID is echoed in the response; a stream's frames all carry its
	// request's ID.
	ID uint64 `json:"id"`
	Op string `json:"op"`

	// Version is the client's protocol version (hello).
	Version int `json:"version,omitempty"`

	// Tracepoint is a name ("http:request_done") or a glob ("http:*") for
	// enable, list and stats.
	Tracepoint string `json:"tracepoint,omitempty"`
	// Filter is a filter expression (enable).
	Filter string `json:"filter,omitempty"`
	// Object is an ELF object's bytes (base64 in JSON), loaded in the
	// application; Program names its program to attach. Without
	// Program, every program in a "uebpf/tracepoint/<provider>/<name>"
	// section is attached to its tracepoint (and Tracepoint must be
	// empty).
	Object  []byte `json:"object,omitempty"`
	Program string `json:"program,omitempty"`
	// ContextSize overrides the context size the object's programs are
	// verified for (by default their parameter's type in BTF).
	ContextSize int `json:"context_size,omitempty"`
	// Context names context fields to fill for a program: "timestamp",
	// "vtid", "goid".
	Context []string `json:"context,omitempty"`
	// BufferSize is the ring buffer size of a new session, in bytes.
	BufferSize int `json:"buffer_size,omitempty"`

	// Session is the session to enable into (0: a new one), disable,
	// stream, stop, or whose object's maps to use.
	Session uint64 `json:"session,omitempty"`
	// Attachment is the attachment to disable.
	Attachment uint64 `json:"attachment,omitempty"`

	// Map names a map of the session's object; Key and Value are its
	// bytes; Flags are BPF_ANY (0), BPF_NOEXIST (1) or BPF_EXIST (2) for
	// updates; Max bounds an iteration's entries.
	Map   string `json:"map,omitempty"`
	Key   Hex    `json:"key,omitempty"`
	Value Hex    `json:"value,omitempty"`
	Flags uint64 `json:"flags,omitempty"`
	Max   int    `json:"max,omitempty"`
}

// Response is the server's message: a reply to a request, or a frame of a
// stream.
type Response struct {
	ID uint64 `json:"id"`
	// Error, if not empty, is why the request failed; Code classifies it.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`

	// hello
	Version int    `json:"version,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Process string `json:"process,omitempty"`
	// ClockOffset is CLOCK_REALTIME minus CLOCK_MONOTONIC on the server,
	// in ns: events' timestamps plus it are wall time there.
	ClockOffset int64 `json:"clock_offset,omitempty"`

	Tracepoints []TracepointInfo `json:"tracepoints,omitempty"`
	Sessions    []SessionInfo    `json:"sessions,omitempty"`

	Value   Hex     `json:"value,omitempty"`
	Entries []Entry `json:"entries,omitempty"`

	// Events of a stream's frame, and the session's counters as of that
	// frame (Matched = Recorded + Dropped: a stream that fell behind
	// says exactly how many events it lost).
	Events []Event `json:"events,omitempty"`
	Stats  *Stats  `json:"stats,omitempty"`
	// End marks a stream's last frame; Reason says why it ended.
	End    bool   `json:"end,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// TracepointInfo describes a tracepoint of the application.
type TracepointInfo struct {
	Name string `json:"name"`
	// Size is the payload's size; RecordSize what programs see.
	Size       int         `json:"size"`
	RecordSize int         `json:"record_size"`
	Fields     []FieldInfo `json:"fields"`
	Stats      Stats       `json:"stats"`
}

// FieldInfo is a payload field. Type is written as tracepoint.ParseSpec
// reads it: u8..u64, s8..s64, f32, f64, bool, string[N].
type FieldInfo struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
}

// Stats are the counters of a tracepoint, session or attachment, as
// tracepoint.Stats.
type Stats struct {
	Fired    uint64 `json:"fired"`
	Matched  uint64 `json:"matched"`
	Recorded uint64 `json:"recorded"`
	Dropped  uint64 `json:"dropped"`
	Errors   uint64 `json:"errors"`
}

// SessionInfo describes a session of the server.
type SessionInfo struct {
	ID          uint64           `json:"id"`
	BufferSize  int              `json:"buffer_size"`
	Stats       Stats            `json:"stats"`
	Attachments []AttachmentInfo `json:"attachments"`
	// Maps are the maps of the objects loaded into the session.
	Maps      []string `json:"maps,omitempty"`
	Streaming bool     `json:"streaming,omitempty"`
}

// AttachmentInfo describes one attachment of a session.
type AttachmentInfo struct {
	ID          uint64 `json:"id"`
	Tracepoint  string `json:"tracepoint"`
	Description string `json:"description"`
	Stats       Stats  `json:"stats"`
}

// Entry is a map's key and value.
type Entry struct {
	Key   Hex `json:"key"`
	Value Hex `json:"value"`
}

// Event is one recorded event.
type Event struct {
	Tracepoint string `json:"tp"`
	// TimestampNs is CLOCK_MONOTONIC, as tracepoint.Context has it.
	TimestampNs uint64 `json:"ts"`
	Vtid        int64  `json:"vtid"`
	Vpid        int64  `json:"vpid"`
	Goid        uint64 `json:"goid"`
	Procname    string `json:"procname"`
	// Fields are the payload's, in declaration order.
	Fields Fields `json:"fields"`
}

// Fields are a payload's fields in order; in JSON, an object.
type Fields []FieldValue

// FieldValue is one field: Value is a uint64, int64, float64, bool or
// string ("NaN", "+Inf" or "-Inf" for floats JSON cannot hold).
type FieldValue struct {
	Name  string
	Value any
}

// Get returns the value of the field called name, or nil.
func (fs Fields) Get(name string) any {
	for _, f := range fs {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// String writes the fields as name=value, strings quoted, as a text
// view of events shows them.
func (fs Fields) String() string {
	var b []byte
	for i, f := range fs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, f.Name...)
		b = append(b, '=')
		if s, ok := f.Value.(string); ok {
			b = strconv.AppendQuote(b, s)
		} else {
			b = fmt.Append(b, f.Value)
		}
	}
	return string(b)
}

// MarshalJSON writes an object with the fields in order.
func (fs Fields) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.Name)
		b = append(b, ':')
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads an object, keeping its order. Integers become
// int64 (uint64 above its range), other numbers float64.
func (fs *Fields) UnmarshalJSON(b []byte) error {
	// Events' fields are flat: a scanner for them costs a tenth of
	// json.Decoder's tokens. Anything else takes the general path.
	if out, ok := scanFlat(b); ok {
		*fs = out
		return nil
	}
	out, err := decodeFields(b)
	if err != nil {
		return err
	}
	*fs = out
	return nil
}

// decodeFields is the general path of Fields.UnmarshalJSON.
func decodeFields(b []byte) (Fields, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if t != json.Delim('{') {
		return nil, fmt.Errorf("fields: %v, want an object", t)
	}
	out := Fields{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		if n, ok := v.(json.Number); ok {
			v = number(n)
		}
		out = append(out, FieldValue{Name: name, Value: v})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// number turns a JSON number into the Go value it was written from.
func number(n json.Number) any {
	if strings.ContainsAny(string(n), ".eE") {
		f, _ := n.Float64()
		return f
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	var u uint64
	if err := json.Unmarshal([]byte(n), &u); err == nil {
		return u
	}
	f, _ := n.Float64()
	return f
}

// Hex is bytes written in JSON as a hex string.
type Hex []byte

func (h Hex) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+2*len(h))
	b = append(b, '"')
	b = hex.AppendEncode(b, h)
	return append(b, '"'), nil
}

func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	*h = v
	return nil
}

// ErrFrameTooLarge reports a frame whose length prefix is over
// MaxFrameSize.
var ErrFrameTooLarge = errors.New("frame too large")

// frameChunk is the memory a frame's body gets before its bytes arrive.
const frameChunk = 64 << 10

// readFrame reads one frame's body into buf (grown as needed) and returns
// it. The length is checked before the body is read, and the body's
// memory grows with the bytes that arrive (one chunk, then up to four
// times what arrived), never to the length claimed first: a hostile
// prefix costs what was sent.
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n > MaxFrameSize {
		return nil, fmt.Errorf("frame of %d bytes (at most %d): %w", n, MaxFrameSize, ErrFrameTooLarge)
	}
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			// Four times what arrived: few copies for a frame that
			// comes, little memory for one that does not.
			b := make([]byte, len(buf), min(n, max(4*len(buf), frameChunk)))
			buf = b[:copy(b, buf)]
		}
		got, err := io.ReadFull(r, buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+got]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("frame of %d bytes, %d received: %w", n, len(buf), err)
		}
	}
	return buf, nil
}

// appendFrameHeader reserves the length prefix at the start of a frame
// being built; finishFrame fills it.
func appendFrameHeader(b []byte) []byte { return append(b, 0, 0, 0, 0) }

func finishFrame(b []byte) ([]byte, error) {
	n := len(b) - 4
	if n > MaxFrameSize {
		return nil, fmt.Errorf("frame of %d bytes (at most %d): %w", n, MaxFrameSize, ErrFrameTooLarge)
	}
	binary.LittleEndian.PutUint32(b, uint32(n))
	return b, nil
}

// encodeFrame returns the frame of a message.
func encodeFrame(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return finishFrame(append(appendFrameHeader(make([]byte, 0, 4+len(body))), body...))
}

// decodeRequest parses a request frame's body and checks what JSON cannot:
// that it names an operation.
func decodeRequest(body []byte) (*Request, error) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return &req, fmt.Errorf("decoding request: %w", err)
	}
	if req.Op == "" {
		return &req, errors.New("request without an op")
	}
	return &req, nil
}

// scanFlat reads a JSON object whose values are all strings, numbers,
// booleans or null; false if b is anything else.
func scanFlat(b []byte) (Fields, bool) {
	out, i, ok := scanFlatAt(b, skipSpace(b, 0))
	return out, ok && skipSpace(b, i) == len(b)
}

// scanFlatAt reads a flat object at b[i] and returns the index after it.
func scanFlatAt(b []byte, i int) (Fields, int, bool) {
	out := make(Fields, 0, 8)
	ok := scanObject(b, &i, func(name string, b []byte, i int) (int, bool) {
		v, j, ok := scanScalar(b, i)
		out = append(out, FieldValue{Name: name, Value: v})
		return j, ok
	})
	return out, i, ok
}

// scanObject reads the object at b[*i], calling value for each member
// with the index of its value, which returns the index after it. *i ends
// after the object.
func scanObject(b []byte, i *int, value func(name string, b []byte, i int) (int, bool)) bool {
	j := *i
	if j >= len(b) || b[j] != '{' {
		return false
	}
	j = skipSpace(b, j+1)
	if j < len(b) && b[j] == '}' {
		*i = j + 1
		return true
	}
	for {
		name, k, ok := scanName(b, j)
		if !ok {
			return false
		}
		j = skipSpace(b, k)
		if j >= len(b) || b[j] != ':' {
			return false
		}
		if j, ok = value(name, b, skipSpace(b, j+1)); !ok {
			return false
		}
		j = skipSpace(b, j)
		if j >= len(b) {
			return false
		}
		switch b[j] {
		case ',':
			j = skipSpace(b, j+1)
		case '}':
			*i = j + 1
			return true
		default:
			return false
		}
	}
}

// scanScalar reads the string, number, boolean or null at b[i].
func scanScalar(b []byte, i int) (any, int, bool) {
	if i >= len(b) {
		return nil, i, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == 't' && bytes.HasPrefix(b[i:], []byte("true")):
		return true, i + 4, true
	case c == 'f' && bytes.HasPrefix(b[i:], []byte("false")):
		return false, i + 5, true
	case c == 'n' && bytes.HasPrefix(b[i:], []byte("null")):
		return nil, i + 4, true
	case c == '-' || '0' <= c && c <= '9':
		if v, j, ok := scanInt(b, i); ok {
			return v, j, true
		}
		j := i + 1
		for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
			j++
		}
		if !json.Valid(b[i:j]) {
			return nil, i, false
		}
		return number(json.Number(b[i:j])), j, true
	}
	return nil, i, false
}

// scanInt reads the common number, an integer of up to 18 digits, which
// cannot overflow an int64; false leaves the others to the general path
// (which refuses leading zeros, as JSON does).
func scanInt(b []byte, i int) (int64, int, bool) {
	neg := b[i] == '-'
	j := i
	if neg {
		j++
	}
	start := j
	var n int64
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		n = n*10 + int64(b[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 18 || digits > 1 && b[start] == '0' {
		return 0, i, false
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, i, false
	}
	if neg {
		n = -n
	}
	return n, j, true
}

// UnmarshalJSON reads an event with a scanner when it has the shape the
// server writes (the client's cost per event is most of a stream's), and
// with encoding/json otherwise. Unknown members are ignored.
func (e *Event) UnmarshalJSON(b []byte) error {
	if scanEvent(b, e) {
		return nil
	}
	type plain Event // without this method
	*e = Event{}
	return json.Unmarshal(b, (*plain)(e))
}

func scanEvent(b []byte, e *Event) bool {
	i, ok := scanEventAt(b, skipSpace(b, 0), e)
	return ok && skipSpace(b, i) == len(b)
}

// scanEventAt reads the event at b[i] and returns the index after it.
func scanEventAt(b []byte, i int, e *Event) (int, bool) {
	*e = Event{}
	ok := scanObject(b, &i, func(name string, b []byte, i int) (int, bool) {
		if name == "fields" {
			if i+4 <= len(b) && string(b[i:i+4]) == "null" {
				e.Fields = nil
				return i + 4, true
			}
			fs, j, ok := scanFlatAt(b, i)
			e.Fields = fs
			return j, ok
		}
		v, j, ok := scanScalar(b, i)
		if !ok {
			return j, false
		}
		switch name {
		case "tp":
			e.Tracepoint, ok = v.(string)
			e.Tracepoint = intern(e.Tracepoint)
		case "procname":
			e.Procname, ok = v.(string)
			e.Procname = intern(e.Procname)
		case "ts":
			e.TimestampNs, ok = toUint(v)
		case "goid":
			e.Goid, ok = toUint(v)
		case "vtid":
			e.Vtid, ok = v.(int64)
		case "vpid":
			e.Vpid, ok = v.(int64)
		}
		return j, ok
	})
	return i, ok
}

// scanEventsFrame reads a frame of a stream as the server writes it,
// {"id":N,"events":[...],"stats":{...}}, without encoding/json's
// reflection and its validation of the whole frame first. Anything else
// is left to encoding/json (false).
func scanEventsFrame(b []byte, r *Response) bool {
	*r = Response{}
	i := skipSpace(b, 0)
	ok := scanObject(b, &i, func(name string, b []byte, i int) (int, bool) {
		switch name {
		case "id":
			v, j, ok := scanScalar(b, i)
			var okU bool
			r.ID, okU = toUint(v)
			return j, ok && okU
		case "events":
			return scanEvents(b, i, &r.Events)
		case "stats":
			if r.Stats == nil {
				r.Stats = new(Stats)
			}
			return scanStats(b, i, r.Stats)
		}
		return i, false
	})
	return ok && skipSpace(b, i) == len(b)
}

func scanEvents(b []byte, i int, out *[]Event) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return i, false
	}
	evs := (*out)[:0]
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		*out = evs
		return i + 1, true
	}
	for {
		evs = append(evs, Event{})
		var ok bool
		if i, ok = scanEventAt(b, i, &evs[len(evs)-1]); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			*out = evs
			return i + 1, true
		default:
			return i, false
		}
	}
}

func scanStats(b []byte, i int, st *Stats) (int, bool) {
	ok := scanObject(b, &i, func(name string, b []byte, i int) (int, bool) {
		v, j, ok := scanScalar(b, i)
		u, okU := toUint(v)
		switch name {
		case "fired":
			st.Fired = u
		case "matched":
			st.Matched = u
		case "recorded":
			st.Recorded = u
		case "dropped":
			st.Dropped = u
		case "errors":
			st.Errors = u
		default:
			return j, false
		}
		return j, ok && okU
	})
	return i, ok
}

func toUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case int64:
		return uint64(x), x >= 0
	case uint64:
		return x, true
	}
	return 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// names interns the strings every event repeats (member names, the
// tracepoint's and process's names), which would otherwise be most of a
// client's allocations per event. It is bounded: names do not grow
// without end, but a hostile stream could try.
var names struct {
	sync.Mutex
	m map[string]string
}

const maxNames = 4096

func intern(s string) string {
	names.Lock()
	defer names.Unlock()
	if v, ok := names.m[s]; ok {
		return v
	}
	if names.m == nil || len(names.m) >= maxNames {
		names.m = map[string]string{}
	}
	names.m[s] = s
	return s
}

// scanName is scanString for member names: interned, without allocating
// for one seen before.
func scanName(b []byte, i int) (string, int, bool) {
	if i < len(b) && b[i] == '"' {
		if j := bytes.IndexByte(b[i+1:], '"'); j >= 0 {
			raw := b[i+1 : i+1+j]
			if bytes.IndexByte(raw, '\\') < 0 {
				names.Lock()
				v, ok := names.m[string(raw)]
				names.Unlock()
				if ok {
					return v, i + j + 2, true
				}
			}
		}
	}
	v, j, ok := scanString(b, i)
	if !ok {
		return "", i, false
	}
	return intern(v.(string)), j, true
}

// scanString reads the JSON string at b[i]: as is when it has no escape
// and is valid UTF-8, else through encoding/json.
func scanString(b []byte, i int) (any, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	plain := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			return nil, i, false
		case c == '"':
			if plain && utf8.Valid(b[i+1:j]) {
				return string(b[i+1 : j]), j + 1, true
			}
			var s string
			if json.Unmarshal(b[i:j+1], &s) != nil {
				return nil, i, false
			}
			return s, j + 1, true
		}
	}
	return nil, i, false
}
