package control

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// logged collects a server's log.
type logged struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logged) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{&l.mu, &l.b}, nil))
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// expectLimit reads the error frame a connection closed for a limit gets,
// then its end.
func expectLimit(t *testing.T, rc *rawConn, option string) {
	t.Helper()
	r := rc.recv()
	if r.Code != CodeLimit || !strings.Contains(r.Error, "Options."+option) {
		t.Errorf("frame %+v, want code %q naming Options.%s", r, CodeLimit, option)
	}
	if _, err := rc.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection not closed after the limit: %v", err)
	}
}

// 32 connections each claiming a frame of MaxFrameSize and sending a
// little of it cost what they sent, not 512 MiB; a well-behaved client is
// served meanwhile; and each half-sent frame is cut off after
// FrameTimeout.
func TestHalfSentFrames(t *testing.T) {
	const hostile, timeout = 32, 500 * time.Millisecond
	var log logged
	s := startServer(t, &Options{MaxConns: hostile + 1, MaxConnsPerUID: hostile + 1, FrameTimeout: timeout, Logger: log.logger()})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rcs := make([]*rawConn, hostile)
	for i := range rcs {
		rcs[i] = rawDial(t, s.Path(), true)
		rcs[i].Write(binary.LittleEndian.AppendUint32(nil, MaxFrameSize))
		rcs[i].Write(bytes.Repeat([]byte{'{'}, 1000))
	}
	sent := time.Now()
	c := dial(t, s.Path())
	if _, err := c.List(""); err != nil {
		t.Errorf("a client next to the half-sent frames: %v", err)
	}
	s.mu.Lock()
	open := len(s.conns)
	s.mu.Unlock()
	if time.Since(sent) < timeout && open != hostile+1 {
		t.Errorf("%d connections open while the client was served, want %d", open, hostile+1)
	}
	for _, rc := range rcs {
		expectLimit(t, rc, "FrameTimeout")
	}
	if d := time.Since(sent); d < timeout {
		t.Errorf("half-sent frames cut off after %v, before FrameTimeout (%v)", d, timeout)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d connections claiming %d MiB each: %.1f MiB allocated", hostile, MaxFrameSize>>20, float64(allocated)/(1<<20))
	if allocated > 64<<20 {
		t.Errorf("%d MiB allocated for %d half-sent frames of %d bytes sent each", allocated>>20, hostile, 1000)
	}
	if n := strings.Count(log.String(), "connection closed: frame timeout"); n != hostile {
		t.Errorf("%d frame timeouts logged, want %d:\n%s", n, hostile, log.String())
	}
	if _, err := c.List(""); err != nil {
		t.Errorf("the well-behaved client after the timeouts: %v", err)
	}
}

// A connection idle for IdleTimeout is closed, unless a stream runs on
// it; requests keep it open; a negative IdleTimeout never closes it.
func TestIdleTimeout(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	const idle = 200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		// use does something with the client for several idle periods
		// and says whether the connection must then be open.
		use func(t *testing.T, c *Client) bool
	}{
		{"idle", idle, func(t *testing.T, c *Client) bool {
			time.Sleep(3 * idle)
			return false
		}},
		{"requests", idle, func(t *testing.T, c *Client) bool {
			for range 12 {
				time.Sleep(idle / 4)
				if _, err := c.List(""); err != nil {
					t.Fatal(err)
				}
			}
			return true
		}},
		{"stream", idle, func(t *testing.T, c *Client) bool {
			si, err := c.Enable(EnableOptions{Tracepoint: tps[0].Name()})
			if err != nil {
				t.Fatal(err)
			}
			st, err := c.Stream(si.ID)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(4 * idle)
			if _, err := c.List(""); err != nil {
				t.Fatalf("a connection with a stream running was closed: %v", err)
			}
			if err := st.Stop(); err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := st.Next(context.Background()); err != nil {
					break
				}
			}
			c.Disable(si.ID)
			// Idleness counts from when the stream was last seen
			// running: at most two periods ago.
			time.Sleep(3 * idle)
			return false
		}},
		{"never", -1, func(t *testing.T, c *Client) bool {
			time.Sleep(3 * idle)
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log logged
			s := startServer(t, &Options{IdleTimeout: tc.timeout, Logger: log.logger()})
			c := dial(t, s.Path())
			open := tc.use(t, c)
			_, err := c.List("")
			switch {
			case open && err != nil:
				t.Errorf("connection closed: %v", err)
			case !open && (!errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "Options.IdleTimeout")):
				t.Errorf("a request after idling: %v, want ErrLimit naming Options.IdleTimeout", err)
			case !open && !strings.Contains(log.String(), "connection closed: idle timeout"):
				t.Errorf("idle close not logged:\n%s", log.String())
			}
		})
	}
}

// The hello must come within FrameTimeout of connecting.
func TestHelloTimeout(t *testing.T) {
	s := startServer(t, &Options{FrameTimeout: 100 * time.Millisecond})
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"nothing", nil},
		{"half a hello", frame(`{"id":1,"op":"hello","version":1}`)[:10]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := rawDial(t, s.Path(), false)
			rc.Write(tc.send)
			expectLimit(t, rc, "FrameTimeout")
		})
	}
}

// MaxConnsPerUID bounds one uid's connections below MaxConns; each
// refusal names its option, and is logged.
func TestConnLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		allow  int
		option string
	}{
		{"per uid", Options{MaxConns: 10, MaxConnsPerUID: 2}, 2, "MaxConnsPerUID"},
		{"per uid by default", Options{}, 8, "MaxConnsPerUID"},
		{"all", Options{MaxConns: 3, MaxConnsPerUID: 5}, 3, "MaxConns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logged
			tc.opts.Logger = log.logger()
			s := startServer(t, &tc.opts)
			var cs []*Client
			for range tc.allow {
				cs = append(cs, dial(t, s.Path()))
			}
			_, err := Dial(s.Path())
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "control.Options."+tc.option+")") {
				t.Errorf("connection %d: %v, want ErrLimit naming Options.%s", tc.allow+1, err, tc.option)
			}
			if !strings.Contains(log.String(), "connection refused") || !strings.Contains(log.String(), "Options."+tc.option) {
				t.Errorf("refusal not logged:\n%s", log.String())
			}
			// A connection that ends makes room.
			cs[0].Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				c, err := Dial(s.Path())
				if err == nil {
					c.Close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no room after a connection closed: %v", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// A server of user nobody with MaxConnsPerUID 2: root's connections fill
// their share, and nobody, its own user, still gets in.
func TestConnLimitsOtherUID(t *testing.T) {
	needNobody(t)
	base := isolate(t)
	dir := filepath.Join(base, "nobody")
	mkdir(t, dir, nobody, 0o700)
	path := filepath.Join(dir, "s.sock")
	startHelper(t, true, "server", path, "2")
	for range 2 {
		rawDial(t, path, true)
	}
	_, err := Socket{Path: path, UID: nobody}.Dial()
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "too many connections of uid 0") {
		t.Errorf("root's third connection: %v, want ErrLimit for uid 0", err)
	}
	client := startHelper(t, true, "client", path)
	if out := client.stop(); len(out) != 1 || out[0] != "ok" || client.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("nobody's client: %q, exit %d\n%s", out, client.cmd.ProcessState.ExitCode(), client.errors())
	}
}

// FuzzReadFrame reads frames from a stream delivered in reads of a few
// bytes: it must find the frames a whole-buffer parse finds, fail where
// it fails, and never ask for more memory than four times what arrived
// (or one chunk). The stream is data and then pad*2 bytes of 'x', so that
// bodies past a chunk come from small inputs.
func FuzzReadFrame(f *testing.F) {
	f.Add(uint8(0), uint16(0), frame(`{"id":1,"op":"hello","version":1}`))
	f.Add(uint8(2), uint16(0), append(frame(`{}`), frame(`{"id":2}`)...))
	f.Add(uint8(200), uint16(0), binary.LittleEndian.AppendUint32(nil, MaxFrameSize))
	f.Add(uint8(1), uint16(35000), binary.LittleEndian.AppendUint32(nil, MaxFrameSize))
	f.Add(uint8(30), uint16(40000), binary.LittleEndian.AppendUint32(nil, 70000))
	f.Add(uint8(0), uint16(0), binary.LittleEndian.AppendUint32(nil, MaxFrameSize+1))
	f.Add(uint8(1), uint16(0), []byte{5, 0})
	f.Fuzz(func(t *testing.T, chunk uint8, pad uint16, data []byte) {
		data = append(data, bytes.Repeat([]byte{'x'}, 2*int(pad))...)
		// Reads of 1 to 65026 bytes.
		r := &dribble{t: t, data: data, chunk: 1 + int(chunk)*int(chunk)}
		rest := data
		var buf []byte
		for {
			r.hdr, r.body, r.reused = 0, 0, cap(buf)
			body, err := readFrame(r, buf)
			var want []byte
			var wantErr error
			switch {
			case len(rest) == 0:
				wantErr = io.EOF
			case len(rest) < 4:
				wantErr = io.ErrUnexpectedEOF
			case binary.LittleEndian.Uint32(rest) > MaxFrameSize:
				wantErr = ErrFrameTooLarge
			case uint64(len(rest)-4) < uint64(binary.LittleEndian.Uint32(rest)):
				wantErr = io.ErrUnexpectedEOF
			default:
				n := int(binary.LittleEndian.Uint32(rest))
				want, rest = rest[4:4+n], rest[4+n:]
			}
			if wantErr != nil {
				if !errors.Is(err, wantErr) {
					t.Fatalf("readFrame: %v, want %v", err, wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(body, want) {
				t.Fatalf("readFrame: %q, %v; want %q", body, err, want)
			}
			buf = body
		}
	})
}

// dribble delivers data chunk bytes at a time, and checks that each
// read of a frame's body is into memory it may take: what was already
// there (reused), one chunk, or four times what arrived of the body.
type dribble struct {
	t      *testing.T
	data   []byte
	chunk  int
	read   int // of data
	hdr    int // bytes of the current frame's header delivered
	body   int // and of its body
	reused int
}

func (d *dribble) Read(p []byte) (int, error) {
	if d.read == len(d.data) {
		return 0, io.EOF
	}
	n := d.chunk
	if d.hdr < 4 {
		n = min(n, 4-d.hdr)
	} else if len(p) > max(d.reused, frameChunk, 3*d.body) {
		d.t.Fatalf("a read of %d bytes into a body after %d of its bytes arrived", len(p), d.body)
	}
	n = copy(p, d.data[d.read:min(len(d.data), d.read+n)])
	d.read += n
	if d.hdr < 4 {
		d.hdr += n
	} else {
		d.body += n
	}
	return n, nil
}

// BenchmarkReadFrame measures reading frames whose memory grows as their
// bytes arrive, fresh each time (as the client reads a stream's).
func BenchmarkReadFrame(b *testing.B) {
	for _, size := range []int{512, 64 << 10, 1 << 20} {
		f := frame(strings.Repeat("x", size))
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			r := bytes.NewReader(f)
			for range b.N {
				r.Reset(f)
				if _, err := readFrame(r, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
