package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Client is a connection to a control server. Its methods may be called
// from several goroutines; replies are matched to requests by id.
type Client struct {
	rw      io.ReadWriteCloser
	pid     int
	process string
	// clockOffset is the server's CLOCK_REALTIME - CLOCK_MONOTONIC.
	clockOffset int64

	wmu sync.Mutex

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan *Response
	streams map[uint64]*Stream
	err     error // why the connection ended
	done    chan struct{}

	closeOnce sync.Once
	closing   chan struct{} // Close was called: stop delivering frames
}

// ErrClientClosed reports a call on a closed client or connection.
var ErrClientClosed = errors.New("control connection closed")

// NewClient speaks the protocol over rw, a connection to a server
// (through ServeStdio over ssh, say), and closes it when the client is
// closed.
func NewClient(rw io.ReadWriteCloser) (*Client, error) {
	c := &Client{rw: rw, nextID: 1, pending: map[uint64]chan *Response{}, streams: map[uint64]*Stream{}, done: make(chan struct{}), closing: make(chan struct{})}
	f, err := encodeFrame(&Request{ID: 1, Op: OpHello, Version: Version})
	if err == nil {
		_, err = rw.Write(f)
	}
	// Read even when the write failed: a server that refuses the peer
	// says why and hangs up before reading.
	var resp Response
	if rerr := readResponse(rw, &resp, nil); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil && resp.Error == "" {
		rw.Close()
		return nil, fmt.Errorf("control: handshake: %w", err)
	}
	if resp.Error != "" {
		rw.Close()
		return nil, &RemoteError{Op: OpHello, Code: resp.Code, Message: resp.Error}
	}
	c.pid, c.process, c.clockOffset = resp.PID, resp.Process, resp.ClockOffset
	go c.readLoop()
	return c, nil
}

func readResponse(r io.Reader, resp *Response, buf []byte) error {
	body, err := readFrame(r, buf)
	if err != nil {
		return err
	}
	if scanEventsFrame(body, resp) {
		return nil
	}
	*resp = Response{}
	if err := json.Unmarshal(body, resp); err != nil {
		return fmt.Errorf("decoding a response: %w", err)
	}
	return nil
}

// PID is the server process's pid, as its handshake said.
func (c *Client) PID() int { return c.pid }

// Process is the server process's name (its comm).
func (c *Client) Process() string { return c.process }

// ClockOffset is CLOCK_REALTIME minus CLOCK_MONOTONIC on the server, in
// ns: an event's timestamp plus it is the server's wall time.
func (c *Client) ClockOffset() int64 { return c.clockOffset }

// Close closes the connection. The sessions it enabled live on in the
// server.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { close(c.closing) })
	err := c.rw.Close()
	<-c.done
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("control: close: %w", err)
	}
	return nil
}

func (c *Client) readLoop() {
	var err error
	defer func() {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		for _, s := range c.streams {
			close(s.ch)
		}
		c.streams = nil
		c.mu.Unlock()
		c.rw.Close()
		close(c.done)
	}()
	var buf []byte
	for {
		resp := new(Response)
		if err = readResponse(c.rw, resp, buf); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				err = ErrClientClosed
			}
			return
		}
		c.mu.Lock()
		if ch := c.pending[resp.ID]; ch != nil {
			delete(c.pending, resp.ID)
			c.mu.Unlock()
			ch <- resp
			continue
		}
		s := c.streams[resp.ID]
		if s != nil && resp.End {
			delete(c.streams, resp.ID)
		}
		c.mu.Unlock()
		switch {
		case s != nil:
			// A stream nobody reads holds up the connection, until
			// Close.
			select {
			case s.ch <- resp:
			case <-c.closing:
				err = ErrClientClosed
				return
			}
			if resp.End {
				close(s.ch)
			}
		case resp.ID == 0 && resp.Error != "":
			// A connection-level error: the server hangs up after it.
			err = &RemoteError{Op: "connection", Code: resp.Code, Message: resp.Error}
			return
		}
	}
}

// call sends a request and waits for its reply. stream, if not nil, is
// registered to receive the request's later frames.
func (c *Client) call(req *Request, stream *Stream) (*Response, error) {
	ch := make(chan *Response, 1)
	c.mu.Lock()
	if c.streams == nil {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("control: %s: %w", req.Op, err)
	}
	c.nextID++
	req.ID = c.nextID
	c.pending[req.ID] = ch
	if stream != nil {
		// Registered before its frames can arrive; the first frame, the
		// reply, goes to pending.
		stream.id = req.ID
		c.streams[req.ID] = stream
	}
	c.mu.Unlock()
	f, err := encodeFrame(req)
	if err == nil {
		c.wmu.Lock()
		_, err = c.rw.Write(f)
		c.wmu.Unlock()
	}
	if err != nil {
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
		return nil, fmt.Errorf("control: %s: %w", req.Op, err)
	}
	resp, ok := <-ch
	if !ok {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("control: %s: %w", req.Op, err)
	}
	if resp.Error != "" {
		return nil, &RemoteError{Op: req.Op, Code: resp.Code, Message: resp.Error}
	}
	return resp, nil
}

// List describes the tracepoints whose name matches pattern (a name or a
// glob such as "http:*"; all when empty).
func (c *Client) List(pattern string) ([]TracepointInfo, error) {
	resp, err := c.call(&Request{Op: OpList, Tracepoint: pattern}, nil)
	if err != nil {
		return nil, err
	}
	return resp.Tracepoints, nil
}

// Stats returns the counters of the tracepoints matching pattern (all
// when empty) and of every session.
func (c *Client) Stats(pattern string) ([]TracepointInfo, []SessionInfo, error) {
	resp, err := c.call(&Request{Op: OpStats, Tracepoint: pattern}, nil)
	if err != nil {
		return nil, nil, err
	}
	return resp.Tracepoints, resp.Sessions, nil
}

// EnableOptions say what to enable: Tracepoint (a name or a glob) with a
// Filter, or with Program of Object; or all the tracepoint programs of
// Object by section. See Request for each field.
type EnableOptions struct {
	Tracepoint  string
	Filter      string
	Object      []byte
	Program     string
	ContextSize int
	Context     []string
	// BufferSize is a new session's ring size (default: the server's).
	BufferSize int
	// Session adds the attachments to an existing session instead of a
	// new one.
	Session uint64
}

// Enable attaches a filter or programs and returns the session recording
// their events. The session belongs to the server: it lives until
// Disable, or until the application exits.
func (c *Client) Enable(o EnableOptions) (SessionInfo, error) {
	resp, err := c.call(&Request{
		Op: OpEnable, Tracepoint: o.Tracepoint, Filter: o.Filter, Object: o.Object, Program: o.Program,
		ContextSize: o.ContextSize, Context: o.Context, BufferSize: o.BufferSize, Session: o.Session,
	}, nil)
	if err != nil {
		return SessionInfo{}, err
	}
	if len(resp.Sessions) != 1 {
		return SessionInfo{}, fmt.Errorf("control: enable: %d sessions in the reply", len(resp.Sessions))
	}
	return resp.Sessions[0], nil
}

// Disable closes a session: its attachments, its ring and its objects.
func (c *Client) Disable(session uint64) error {
	_, err := c.call(&Request{Op: OpDisable, Session: session}, nil)
	return err
}

// DisableAttachment closes one attachment; its session stays.
func (c *Client) DisableAttachment(id uint64) error {
	_, err := c.call(&Request{Op: OpDisable, Attachment: id}, nil)
	return err
}

// MapLookup returns the value under key in a map of the session's
// objects.
func (c *Client) MapLookup(session uint64, mapName string, key []byte) ([]byte, error) {
	resp, err := c.call(&Request{Op: OpMapLookup, Session: session, Map: mapName, Key: key}, nil)
	if err != nil {
		return nil, err
	}
	return resp.Value, nil
}

// MapUpdate stores value under key; flags are BPF_ANY (0), BPF_NOEXIST
// (1), BPF_EXIST (2).
func (c *Client) MapUpdate(session uint64, mapName string, key, value []byte, flags uint64) error {
	_, err := c.call(&Request{Op: OpMapUpdate, Session: session, Map: mapName, Key: key, Value: value, Flags: flags}, nil)
	return err
}

// MapDelete removes key.
func (c *Client) MapDelete(session uint64, mapName string, key []byte) error {
	_, err := c.call(&Request{Op: OpMapDelete, Session: session, Map: mapName, Key: key}, nil)
	return err
}

// MapIterate returns up to max entries of the map (0: the server's
// limit), and whether they are all of them.
func (c *Client) MapIterate(session uint64, mapName string, max int) ([]Entry, bool, error) {
	resp, err := c.call(&Request{Op: OpMapIterate, Session: session, Map: mapName, Max: max}, nil)
	if err != nil {
		return nil, false, err
	}
	return resp.Entries, resp.End, nil
}

// Stream is the stream of a session's recorded events to one client.
type Stream struct {
	c       *Client
	id      uint64
	session uint64
	ch      chan *Response

	events []Event
	stats  Stats
	reason string
	ended  bool
}

// Stream starts streaming a session's events. A session streams to one
// client at a time (ErrBusy); events the ring buffer had no room for are
// counted in Stats().Dropped. Read the stream promptly: replies to other
// calls on the client wait behind its frames.
func (c *Client) Stream(session uint64) (*Stream, error) {
	s := &Stream{c: c, session: session, ch: make(chan *Response, 64)}
	resp, err := c.call(&Request{Op: OpStream, Session: session}, s)
	if err != nil {
		c.mu.Lock()
		if c.streams != nil {
			delete(c.streams, s.id)
		}
		c.mu.Unlock()
		return nil, err
	}
	if resp.Stats != nil {
		s.stats = *resp.Stats
	}
	return s, nil
}

// Next returns the next event. After the stream ends (Stop, the session
// disabled) it returns io.EOF, and Reason says why.
func (s *Stream) Next(ctx context.Context) (Event, error) {
	for len(s.events) == 0 {
		if s.ended {
			return Event{}, io.EOF
		}
		var resp *Response
		var ok bool
		select {
		case resp, ok = <-s.ch:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("control: stream: %w", ctx.Err())
		}
		if !ok {
			s.ended = true
			if s.reason == "" {
				s.c.mu.Lock()
				err := s.c.err
				s.c.mu.Unlock()
				return Event{}, fmt.Errorf("control: stream: %w", err)
			}
			return Event{}, io.EOF
		}
		if resp.Stats != nil {
			s.stats = *resp.Stats
		}
		if resp.Error != "" {
			return Event{}, &RemoteError{Op: OpStream, Code: resp.Code, Message: resp.Error}
		}
		if resp.End {
			s.reason = resp.Reason
		}
		s.events = resp.Events
	}
	e := s.events[0]
	s.events = s.events[1:]
	return e, nil
}

// Stats are the session's counters as of the last frame read.
func (s *Stream) Stats() Stats { return s.stats }

// Reason says why the stream ended.
func (s *Stream) Reason() string { return s.reason }

// Stop asks the server to end the stream; Next returns the events sent
// before, then io.EOF. The session's records not streamed stay in it.
func (s *Stream) Stop() error {
	_, err := s.c.call(&Request{Op: OpStop, Session: s.session}, nil)
	return err
}
