package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/internal/clock"
	"github.com/uebpf/uebpf/tracepoint"
)

// Options configure a control server. The zero value (or nil) serves the
// default socket path with the default limits.
type Options struct {
	// Path is the socket's path; by default DefaultPath(os.Getpid()).
	Path string
	// Logger receives connections, refusals and changes (default: none).
	Logger *slog.Logger
	// LoadOptions is the template of the options objects sent by clients
	// are loaded with (copied; Engine defaults to uebpf.EngineAuto when
	// LoadOptions is nil). It is how an application gives programs its
	// own helpers, or limits their maps' memory.
	LoadOptions *uebpf.Options
	// MaxSessions bounds the sessions alive at once (default 64).
	MaxSessions int
	// MaxConns bounds the connections served at once (default 32), and
	// MaxConnsPerUID those of one peer uid (default 8), so that one
	// user's clients cannot take them all.
	MaxConns       int
	MaxConnsPerUID int
	// BufferSize is the size of the rings of a session whose client asks
	// for none (default 1 MiB); MaxBufferSize the largest a client may
	// ask for (default 64 MiB); MaxRingMemory bounds the rings of all
	// sessions together (default 256 MiB).
	BufferSize    int
	MaxBufferSize int
	MaxRingMemory int
	// MaxAttachments bounds the attachments of one session (default 256).
	MaxAttachments int
	// WriteTimeout bounds each write to a client (default 10s): a client
	// that stops reading is disconnected, its sessions kept.
	WriteTimeout time.Duration
	// FrameTimeout bounds how long a frame may take to arrive once its
	// first byte has, and the hello from the connection's start
	// (default 10s): a client cannot hold a connection, and the memory
	// of a frame, by sending it slowly.
	FrameTimeout time.Duration
	// IdleTimeout closes a connection that sent no request for that
	// long and holds no channel (default 10 minutes; negative: never).
	IdleTimeout time.Duration
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LoadOptions == nil {
		c.LoadOptions = &uebpf.Options{Engine: uebpf.EngineAuto}
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 64
	}
	if c.MaxConns <= 0 {
		c.MaxConns = 32
	}
	if c.MaxConnsPerUID <= 0 {
		c.MaxConnsPerUID = 8
	}
	if c.BufferSize <= 0 {
		c.BufferSize = 1 << 20
	}
	if c.MaxBufferSize <= 0 {
		c.MaxBufferSize = 64 << 20
	}
	c.BufferSize = min(c.BufferSize, c.MaxBufferSize)
	if c.MaxRingMemory <= 0 {
		c.MaxRingMemory = 256 << 20
	}
	if c.MaxAttachments <= 0 {
		c.MaxAttachments = tracepoint.DefaultMaxAttachments
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.FrameTimeout <= 0 {
		c.FrameTimeout = 10 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 10 * time.Minute
	}
	return c
}

// Server is a control server: it serves a unix socket and owns the
// sessions its clients enable.
type Server struct {
	opts Options
	log  *slog.Logger
	path string
	ln   *net.UnixListener

	mu       sync.Mutex
	conns    map[*conn]struct{}
	uidConns map[int]int // open connections by peer uid
	sessions map[uint64]*session
	nextID   uint64 // of sessions and attachments
	rings    int    // bytes of rings of the sessions alive, or being made
	files    int    // file-backed channels made
	closed   bool

	wg        sync.WaitGroup // the accept loop and connections
	closeOnce sync.Once
	done      chan struct{}
}

// ErrUnsupported reports Listen on a system without SO_PEERCRED.
var ErrUnsupported = errors.New("control sockets need Linux (SO_PEERCRED)")

// Listen serves the control socket until ctx is done or Close is called,
// then removes it and closes every session. The socket is created with
// mode 0600 in a directory of mode 0700; a socket file left at the path
// by a process that is gone is replaced, one that still answers is an
// error; with the default path, the sockets of other processes that are
// gone are removed from the directory too.
func Listen(ctx context.Context, opts *Options) (*Server, error) {
	if err := supported(); err != nil {
		return nil, fmt.Errorf("control: listen: %w", err)
	}
	o := opts.withDefaults()
	path := o.Path
	if path == "" {
		var err error
		if path, err = DefaultPath(os.Getpid()); err != nil {
			return nil, fmt.Errorf("control: listen: %w", err)
		}
	}
	if err := prepareDir(filepath.Dir(path), o.Path == ""); err != nil {
		return nil, fmt.Errorf("control: listen on %s: %w", path, err)
	}
	if err := removeStale(path); err != nil {
		return nil, fmt.Errorf("control: listen on %s: %w", path, err)
	}
	var swept []string
	if o.Path == "" {
		swept = sweep(filepath.Dir(path))
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control: listen: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	// The directory's 0700 already keeps others out between bind and
	// chmod; the mode is for a path given in Options.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control: listen: %w", err)
	}
	s := &Server{
		opts:     o,
		log:      o.Logger.With("socket", path),
		path:     path,
		ln:       ln,
		conns:    map[*conn]struct{}{},
		uidConns: map[int]int{},
		sessions: map[uint64]*session{},
		done:     make(chan struct{}),
	}
	s.wg.Add(1)
	go s.accept()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	s.log.Info("control socket listening")
	for _, p := range swept {
		s.log.Info("removed the socket of a process that is gone", "path", p)
	}
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops serving: it closes the listener (removing the socket), the
// connections and the sessions, and waits for their goroutines.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		err = s.ln.Close()
		s.mu.Lock()
		s.closed = true
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		sessions := s.sessions
		s.sessions = map[uint64]*session{}
		s.mu.Unlock()
		for _, c := range conns {
			c.c.Close()
		}
		for _, ss := range sessions {
			ss.close()
		}
		s.wg.Wait()
		s.log.Info("control socket closed")
	})
	if err != nil {
		return fmt.Errorf("control: close: %w", err)
	}
	return nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Error("accept", "err", err)
			// A persistent error (EMFILE) would spin; back off.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		cn := &conn{s: s, c: c, channels: map[uint64]*session{}}
		if cn.admit() {
			go cn.serve()
		}
	}
}

// admit checks a new connection's peer and the limits on connections; a
// connection refused is told why and closed.
func (c *conn) admit() bool {
	s := c.s
	cred, err := peerCred(c.c)
	if err != nil {
		s.log.Warn("connection refused: no peer credentials", "err", err)
		c.refuse(CodeDenied, "no peer credentials: "+err.Error())
		return false
	}
	c.cred = cred
	c.log = s.log.With("peer_uid", cred.uid, "peer_pid", cred.pid)
	if !allowed(cred.uid) {
		c.log.Warn("connection refused: uid may not connect", "uid", os.Getuid())
		c.refuse(CodeDenied, fmt.Sprintf("uid %d may not control this process (only its uid %d and root may)", cred.uid, os.Getuid()))
		return false
	}
	s.mu.Lock()
	var refusal string
	switch n := s.uidConns[cred.uid]; {
	case s.closed:
		refusal = "server closed"
	case len(s.conns) >= s.opts.MaxConns:
		refusal = fmt.Sprintf("too many connections: %d open, at most %d (the application raises it with control.Options.MaxConns)", len(s.conns), s.opts.MaxConns)
	case n >= s.opts.MaxConnsPerUID:
		refusal = fmt.Sprintf("too many connections of uid %d: %d open, at most %d (the application raises it with control.Options.MaxConnsPerUID)", cred.uid, n, s.opts.MaxConnsPerUID)
	default:
		s.conns[c] = struct{}{}
		s.uidConns[cred.uid]++
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if refusal != "" {
		c.log.Warn("connection refused", "reason", refusal)
		c.refuse(CodeLimit, refusal)
		return false
	}
	return true
}

// conn is one client connection.
type conn struct {
	s    *Server
	c    *net.UnixConn
	cred cred // the peer's
	log  *slog.Logger

	wmu sync.Mutex // whole frames

	mu sync.Mutex
	// channels are the sessions whose channel the connection holds, by
	// id: it is their consumer until it releases them or closes.
	channels map[uint64]*session
}

// refuse sends a connection an error and closes it. It runs on the accept
// loop's goroutine for refused peers: the short deadline keeps a peer that
// does not read from holding it.
func (c *conn) refuse(code, msg string) {
	c.c.SetWriteDeadline(time.Now().Add(time.Second))
	if f, err := encodeFrame(&Response{Error: msg, Code: code}); err == nil {
		c.c.Write(f)
	}
	c.c.Close()
}

func (c *conn) serve() {
	s := c.s
	defer s.wg.Done()
	defer func() {
		c.c.Close()
		c.releaseAll()
		s.mu.Lock()
		delete(s.conns, c)
		if s.uidConns[c.cred.uid]--; s.uidConns[c.cred.uid] <= 0 {
			delete(s.uidConns, c.cred.uid)
		}
		s.mu.Unlock()
	}()
	if !c.handshake() {
		return
	}
	c.log.Debug("client connected")
	r := &frameReader{c: c.c, timeout: s.opts.FrameTimeout}
	var buf []byte
	idleSince := time.Now()
	for {
		r.started = false
		if s.opts.IdleTimeout > 0 {
			c.c.SetReadDeadline(idleSince.Add(s.opts.IdleTimeout))
		} else {
			c.c.SetReadDeadline(time.Time{})
		}
		body, err := readFrame(r, buf)
		if err != nil {
			switch {
			case errors.Is(err, ErrFrameTooLarge):
				// The rest of the stream cannot be framed: say why and
				// hang up.
				c.write(&Response{Error: err.Error(), Code: CodeBadRequest})
			case errors.Is(err, os.ErrDeadlineExceeded) && r.started:
				c.closeForLimit("frame timeout", fmt.Sprintf("a frame did not arrive within %v of its first byte (the application raises it with control.Options.FrameTimeout): %v", s.opts.FrameTimeout, err))
			case errors.Is(err, os.ErrDeadlineExceeded):
				if c.consuming() {
					// A consumer reading a channel keeps the
					// connection busy: idleness counts from when it
					// was last seen holding one.
					idleSince = time.Now()
					continue
				}
				c.closeForLimit("idle timeout", fmt.Sprintf("no request for %v and no channel held (the application raises it with control.Options.IdleTimeout)", s.opts.IdleTimeout))
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
				c.log.Debug("client read", "err", err)
			}
			c.log.Debug("client disconnected")
			return
		}
		if cap(body) <= 64<<10 {
			buf = body // reuse small buffers; let a big object's go
		}
		req, err := decodeRequest(body)
		var resp *Response
		if err != nil {
			resp = errorResponse(req.ID, req.Op, &codedError{CodeBadRequest, err})
		} else {
			resp = c.handle(req)
		}
		if resp != nil && !c.write(resp) {
			return
		}
		idleSince = time.Now()
	}
}

// frameReader reads a connection, setting the deadline of a frame at its
// first byte: a client may wait between requests (up to IdleTimeout) but
// not dribble one. started says whether the frame's first byte came.
type frameReader struct {
	c       *net.UnixConn
	timeout time.Duration
	started bool
}

func (r *frameReader) Read(p []byte) (int, error) {
	n, err := r.c.Read(p)
	if n > 0 && !r.started {
		r.started = true
		r.c.SetReadDeadline(time.Now().Add(r.timeout))
	}
	return n, err
}

// consuming says whether the connection holds a session's channel.
func (c *conn) consuming() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.channels) > 0
}

// closeForLimit tells the client which limit ends its connection, and
// logs it; the connection closes when serve returns.
func (c *conn) closeForLimit(what, msg string) {
	c.log.Warn("connection closed: "+what, "reason", msg)
	c.write(&Response{Error: "closing the connection: " + msg, Code: CodeLimit})
}

// handshake reads the client's hello and answers it. The whole hello
// must arrive within FrameTimeout of the connection's start.
func (c *conn) handshake() bool {
	c.c.SetReadDeadline(time.Now().Add(c.s.opts.FrameTimeout))
	body, err := readFrame(c.c, nil)
	if err != nil {
		c.log.Debug("no handshake", "err", err)
		switch {
		case errors.Is(err, ErrFrameTooLarge):
			c.write(&Response{Error: err.Error(), Code: CodeBadRequest})
		case errors.Is(err, os.ErrDeadlineExceeded):
			c.closeForLimit("no hello", fmt.Sprintf("no hello within %v (the application raises it with control.Options.FrameTimeout)", c.s.opts.FrameTimeout))
		}
		return false
	}
	req, err := decodeRequest(body)
	switch {
	case err != nil:
		c.write(&Response{ID: req.ID, Error: "handshake: " + err.Error(), Code: CodeBadRequest})
		return false
	case req.Op != OpHello:
		c.write(&Response{ID: req.ID, Error: fmt.Sprintf("handshake: first request is %q, want %q", req.Op, OpHello), Code: CodeBadRequest})
		return false
	case req.Version != Version:
		c.log.Warn("connection refused: protocol version", "version", req.Version)
		c.write(&Response{ID: req.ID, Error: fmt.Sprintf("protocol version %d not supported (this server speaks %d)", req.Version, Version), Code: CodeVersion, Version: Version})
		return false
	}
	return c.write(&Response{ID: req.ID, Version: Version, PID: os.Getpid(), Process: processName(),
		ClockOffset: time.Now().UnixNano() - clock.Now()})
}

// write sends one message; false if the connection is broken.
func (c *conn) write(r *Response) bool {
	f, err := encodeFrame(r)
	if err != nil {
		f, _ = encodeFrame(&Response{ID: r.ID, Error: "encoding the response: " + err.Error(), Code: CodeInternal})
	}
	return c.writeFrame(f)
}

func (c *conn) writeFrame(f []byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
	if _, err := c.c.Write(f); err != nil {
		c.log.Debug("client write", "err", err)
		c.c.Close() // the reading loop ends too
		return false
	}
	return true
}

// codedError is an error with the code of its response.
type codedError struct {
	code string
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

func fail(code, format string, args ...any) error {
	return &codedError{code, fmt.Errorf(format, args...)}
}

func errorResponse(id uint64, op string, err error) *Response {
	code := CodeInternal
	var ce *codedError
	if errors.As(err, &ce) {
		code = ce.code
	}
	return &Response{ID: id, Error: err.Error(), Code: code}
}

// handle runs one request and returns its response, or nil when a stream
// answers it. A panic is a bug of the server, not the client's doing; it
// is turned into an error reply so that the application lives on.
func (c *conn) handle(req *Request) (resp *Response) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic serving a request", "op", req.Op, "panic", r, "stack", string(debug.Stack()))
			resp = errorResponse(req.ID, req.Op, fail(CodeInternal, "%s: internal error: %v", req.Op, r))
		}
	}()
	var err error
	resp = &Response{ID: req.ID}
	s := c.s
	switch req.Op {
	case OpHello:
		err = fail(CodeBadRequest, "hello: already said")
	case OpList:
		resp.Tracepoints, err = listTracepoints(req.Tracepoint, true)
	case OpStats:
		if resp.Tracepoints, err = listTracepoints(req.Tracepoint, false); err == nil {
			resp.Sessions = s.sessionInfos()
		}
	case OpEnable:
		var info SessionInfo
		if info, err = s.enable(req); err == nil {
			resp.Sessions = []SessionInfo{info}
			c.log.Info("enabled", "session", info.ID, "tracepoint", req.Tracepoint, "filter", req.Filter, "program", req.Program)
		}
	case OpDisable:
		if resp.Disabled, err = s.disable(req); err == nil {
			c.log.Info("disabled", "session", req.Session, "attachment", req.Attachment)
		}
	case OpChannel, OpSnapshot:
		if err = c.openChannel(req); err == nil {
			return nil // the reply went with its descriptors
		}
	case OpRelease:
		err = c.release(req.Session)
	case OpMapLookup, OpMapUpdate, OpMapDelete, OpMapIterate:
		err = s.mapOp(req, resp)
	default:
		err = fail(CodeBadRequest, "unknown op %q", req.Op)
	}
	if err != nil {
		return errorResponse(req.ID, req.Op, err)
	}
	return resp
}

// processName is the name clients see in the handshake.
func processName() string {
	if b, err := os.ReadFile("/proc/self/comm"); err == nil && len(b) > 0 {
		return string(b[:len(b)-1])
	}
	return filepath.Base(os.Args[0])
}
