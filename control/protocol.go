package control

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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
	OpChannel    = "channel"
	OpSnapshot   = "snapshot"
	OpRelease    = "release"
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
	// BufferSize is the size of a new session's rings in all, in bytes.
	BufferSize int `json:"buffer_size,omitempty"`
	// Mode is a new session's channel mode: "discard" (the default),
	// "overwrite" (a flight recorder) or "block"; BlockTimeout bounds a
	// firing's wait in block mode, in ns (0: the default, 1 s; negative:
	// no bound).
	Mode         string `json:"mode,omitempty"`
	BlockTimeout int64  `json:"block_timeout_ns,omitempty"`
	// FileBacked backs a new session's channel with a file in the
	// application's socket directory, which outlives a crash (uebpf
	// trace recover).
	FileBacked bool `json:"file_backed,omitempty"`

	// Session is the session to enable into (0: a new one), disable,
	// open the channel of (channel, snapshot), release, or whose object's
	// maps to use.
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
// relayed channel.
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
	// Disabled lists what a disable closed.
	Disabled []AttachmentInfo `json:"disabled,omitempty"`

	Value   Hex     `json:"value,omitempty"`
	Entries []Entry `json:"entries,omitempty"`
	// End says a map iteration's entries are all of them.
	End bool `json:"end,omitempty"`

	// Channel describes the channel a channel or snapshot request
	// opened; its descriptors come with the frame (SCM_RIGHTS).
	Channel *ChannelInfo `json:"channel,omitempty"`
	// Relay is a relayed channel's counters and end (a stdio transport).
	Relay *RelayInfo `json:"relay,omitempty"`

	// fds are the descriptors that came with the frame.
	fds []*os.File
}

// ChannelInfo describes a session's channel.
type ChannelInfo struct {
	Session    uint64 `json:"session"`
	Shards     int    `json:"shards"`
	BufferSize int    `json:"buffer_size"`
	Mode       string `json:"mode"`
	// Remote: the channel's records are relayed in frames by the far end
	// of a stdio transport, which says whose they are.
	Remote      bool   `json:"remote,omitempty"`
	PID         int    `json:"pid,omitempty"`
	Process     string `json:"process,omitempty"`
	ClockOffset int64  `json:"clock_offset,omitempty"`
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
	ID uint64 `json:"id"`
	// BufferSize is the size of the session's rings in all, as they are
	// (a request's size rounds up to whole rings).
	BufferSize int    `json:"buffer_size"`
	Mode       string `json:"mode"`
	// File is the file that backs the channel, if any.
	File        string           `json:"file,omitempty"`
	Stats       Stats            `json:"stats"`
	Attachments []AttachmentInfo `json:"attachments"`
	// Maps are the maps of the objects loaded into the session.
	Maps []string `json:"maps,omitempty"`
	// Consumed: a client holds the session's channel.
	Consumed bool `json:"consumed,omitempty"`
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

// MarshalJSON writes an object with the fields in order; floats JSON has
// no number for are the strings "NaN", "+Inf" and "-Inf".
func (fs Fields) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.Name)
		b = append(b, ':')
		if x, ok := f.Value.(float64); ok && nonFinite(x) != "" {
			b = appendString(b, nonFinite(x))
			continue
		}
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
	out, err := decodeFields(b)
	if err != nil {
		return err
	}
	*fs = out
	return nil
}

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
// prefix costs what was sent. A binary frame (relayed records) is
// refused as too large: only a client reads those (readFrameFlag).
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	return readBody(r, int(binary.LittleEndian.Uint32(hdr[:])), buf)
}

// readFrameFlag is readFrame for a client: it also reads binary frames,
// and says which it read.
func readFrameFlag(r io.Reader, buf []byte) ([]byte, bool, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, false, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	body, err := readBody(r, int(n&^binaryFrame), buf)
	return body, n&binaryFrame != 0, err
}

// readBody reads a frame's body of n bytes.
func readBody(r io.Reader, n int, buf []byte) ([]byte, error) {
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
