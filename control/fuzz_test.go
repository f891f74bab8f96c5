package control

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
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
// the channels, which need a socket), then the client's decoding of
// responses. Nothing may panic; every session made is
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
		c := &conn{s: s, log: s.log, channels: map[uint64]*session{}}
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
			var resp Response
			if json.Unmarshal(body, &resp) == nil {
				// What a client would make of it must re-encode.
				if _, err := json.Marshal(&resp); err != nil {
					t.Fatalf("response %q decodes but does not encode: %v", body, err)
				}
			}
			req, err := decodeRequest(body)
			if err != nil || req.Op == OpChannel || req.Op == OpSnapshot {
				continue // these need a socket, for descriptors
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
