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

// FuzzRelay feeds a relayed channel the frames a hostile far end could
// send (ServeStdio runs on the application's machine, often as another
// user): layouts, records and counters in any order and shape. Reading
// must neither panic nor hand out a record that does not match its
// layout.
func FuzzRelay(f *testing.F) {
	// The layout bytes of a real session of a tracepoint of 8 bytes.
	type ev struct{ X uint64 }
	tp, err := tracepoint.Declare[ev]("fuzzrelay", "e")
	if err != nil {
		f.Fatal(err)
	}
	s, err := tracepoint.NewSession(nil)
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enable(tp); err != nil {
		f.Fatal(err)
	}
	r, err := s.Reader()
	if err != nil {
		f.Fatal(err)
	}
	layout, err := r.Meta(0)
	if err != nil {
		f.Fatal(err)
	}
	rec := binary.LittleEndian.AppendUint32(nil, 8+16)
	rec = binary.LittleEndian.AppendUint32(rec, 0)
	rec = append(rec, make([]byte, 16)...)
	f.Add(uint8(2), uint8(1), layout, rec, uint8(3))
	f.Add(uint8(1), uint8(2), rec, layout, uint8(1))
	f.Add(uint8(2), uint8(1), layout[:5], rec[:9], uint8(0))
	f.Fuzz(func(t *testing.T, k1, k2 uint8, p1, p2 []byte, shards uint8) {
		rc := newRemoteChannel(1)
		rc.process(&ChannelInfo{Shards: int(shards % 5)})
		for i, fr := range []struct {
			kind uint8
			b    []byte
		}{{k1, p1}, {k2, p2}, {k1, p2}} {
			rc.deliver(fr.kind, i%3, append([]byte(nil), fr.b...))
			rc.relayed(&RelayInfo{Shards: make([]ShardStats, i)})
			for s := range rc.shards + 1 {
				rc.read(s, 0, func(ev *tracepoint.Event) {
					if len(ev.Payload) != ev.Info.Size {
						t.Fatalf("a %d-byte payload of a %d-byte layout", len(ev.Payload), ev.Info.Size)
					}
				})
			}
		}
		rc.pending()
		rc.stats()
		rc.stop()
	})
}
