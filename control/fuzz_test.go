package control

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"sync"
	"testing"

	"github.com/uebpf/uebpf/tracepoint"
)

// fuzzServer is one server for every fuzz input: requests run through
// conn.handle as they would from a socket, against a tracepoint of the
// fuzz binary.
var fuzzServer = sync.OnceValue(func() *Server {
	tracepoint.Declare[reqEvent]("fuzz", "request")
	o := (&Options{MaxSessions: 4, MaxBufferSize: 1 << 16}).withDefaults()
	return &Server{opts: o, log: o.Logger, sessions: map[uint64]*session{}, conns: map[*conn]struct{}{}, done: make(chan struct{})}
})

// FuzzDecode feeds byte streams to the frame reader and request decoder,
// and runs what decodes through the server's request handling (all but
// streaming, which needs a socket), then the client's decoding of
// responses and events. Nothing may panic; every session made is
// disabled again.
func FuzzDecode(f *testing.F) {
	for _, body := range []string{
		`{"id":1,"op":"hello","version":1}`,
		`{"id":2,"op":"list","tracepoint":"fuzz:*"}`,
		`{"id":3,"op":"enable","tracepoint":"fuzz:request","filter":"status >= 500 && method == \"GET\""}`,
		`{"id":4,"op":"enable","tracepoint":"fuzz:*","context":["vtid","goid"],"buffer_size":4096}`,
		`{"id":5,"op":"stats"}`,
		`{"id":6,"op":"disable","session":1,"attachment":2}`,
		`{"id":7,"op":"map_iterate","session":1,"map":"m","max":3}`,
		`{"id":8,"op":"map_update","session":1,"map":"m","key":"00ff","value":"0102","flags":1}`,
		`{"id":9,"op":"enable","tracepoint":"fuzz:request","object":"f0VMRgIBAQ==","program":"p"}`,
		`{"a":1,"b":"x\u00e9\ud83d","c":-0.5e3,"d":true,"e":null,"a":18446744073709551615}`,
		`{"tp":"p:n","ts":5,"vtid":-1,"vpid":2,"goid":3,"procname":"x","fields":{"s":"\"","n":1},"extra":1}`,
		`{"id":11,"events":[{"tp":"a:b","ts":1,"vtid":0,"vpid":9,"goid":0,"procname":"p","fields":{"x":-12,"y":"s"}}],"stats":{"fired":1,"matched":1,"recorded":1,"dropped":0,"errors":0}}`,
		`{"name":"a:b","size":16,"fields":[{"name":"x","type":"u32","offset":4,"size":4},{"name":"s","type":"string[4]","offset":8,"size":4}]}`,
		`{"tp":"a:b","ts":1,"fields":{"x":7,"s":"abcd"}}`,
		`{"id":10,"events":[{"tp":"a:b","ts":1,"fields":{"x":1,"y":"s","z":-1.5,"w":true}}],"end":true}`,
	} {
		f.Add(frame(body))
		f.Add(append(frame(body), frame(body)...))
	}
	f.Add(binary.LittleEndian.AppendUint32(nil, MaxFrameSize+1))
	f.Add([]byte{3, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzServer()
		c := &conn{s: s, log: s.log, streams: map[uint64]*stream{}}
		r := bytes.NewReader(data)
		var buf []byte
		for i := range 8 {
			body, err := readFrame(r, buf)
			if err != nil {
				if i == 0 && len(data) >= 4 && binary.LittleEndian.Uint32(data) > MaxFrameSize && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("oversized first frame: %v", err)
				}
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("readFrame: unexpected error %v", err)
				}
				break
			}
			// The clients' scanners agree with encoding/json.
			if fs, ok := scanFlat(body); ok {
				slow, err := decodeFields(body)
				if err != nil || fmt.Sprintf("%#v", slow) != fmt.Sprintf("%#v", fs) {
					t.Fatalf("fields %q: scanned %#v, decoded %#v, %v", body, fs, slow, err)
				}
			}
			var e Event
			if scanEvent(body, &e) {
				type plain Event
				var p plain
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatalf("event %q scanned, but encoding/json says %v", body, err)
				}
			}
			var fr Response
			if scanEventsFrame(body, &fr) {
				var slow Response
				if err := json.Unmarshal(body, &slow); err != nil || slow.ID != fr.ID || len(slow.Events) != len(fr.Events) {
					t.Fatalf("frame %q: scanned id %d, %d events; encoding/json: id %d, %d events, %v", body, fr.ID, len(fr.Events), slow.ID, len(slow.Events), err)
				}
			}
			var resp Response
			if json.Unmarshal(body, &resp) == nil {
				// What a client would make of it must re-encode.
				if _, err := json.Marshal(&resp); err != nil {
					t.Fatalf("response %q decodes but does not encode: %v", body, err)
				}
			}
			// A tracepoint's layout and an event, as Client.Record reads
			// them from a server it does not trust.
			var ti TracepointInfo
			if json.Unmarshal(body, &ti) == nil {
				if info, err := ti.Info(); err == nil {
					if payload, _, err := encodeEvent(info, &e); err == nil && len(payload) != info.Size {
						t.Fatalf("layout %q: %d-byte payload, want %d", body, len(payload), info.Size)
					}
				}
			}
			req, err := decodeRequest(body)
			if err != nil || req.Op == OpStream {
				continue
			}
			out := c.handle(req)
			if out == nil {
				t.Fatalf("no response to %q", body)
			}
			if out.Error == "" && out.Code != "" || out.Error != "" && codeErrors[out.Code] == nil {
				t.Fatalf("response %+v to %q: error without a known code", out, body)
			}
			if _, err := encodeFrame(out); err != nil {
				t.Fatalf("response to %q does not encode: %v", body, err)
			}
		}
		s.mu.Lock()
		ss := s.sessions
		s.sessions = map[uint64]*session{}
		s.mu.Unlock()
		for _, x := range ss {
			x.close()
		}
	})
}
