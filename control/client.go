package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
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

	// fdc is rw when it is a unix connection, which can carry a
	// channel's descriptors.
	fdc *fdConn

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan *Response
	remotes map[uint64]*remoteChannel // relayed channels, by request id
	err     error                     // why the connection ended
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
	c := &Client{rw: rw, nextID: 1, pending: map[uint64]chan *Response{}, remotes: map[uint64]*remoteChannel{}, done: make(chan struct{}), closing: make(chan struct{})}
	if uc, ok := rw.(*net.UnixConn); ok {
		c.fdc = newFDConn(uc)
		c.rw = c.fdc
	}
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
	body, binary, err := readFrameFlag(r, buf)
	if err != nil {
		return err
	}
	if binary {
		return errors.New("control: a binary frame where a reply was due")
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

// Done is closed when the connection has ended (Close, or the server
// went: the application exited).
func (c *Client) Done() <-chan struct{} { return c.done }

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
		for _, rc := range c.remotes {
			rc.gone()
		}
		c.remotes = nil
		c.mu.Unlock()
		c.rw.Close()
		close(c.done)
	}()
	var buf []byte
	for {
		body, binary, rerr := readFrameFlag(c.rw, buf)
		if err = rerr; err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				err = ErrClientClosed
			}
			return
		}
		if binary {
			// A relayed channel's records: the channel keeps the body.
			kind, shard, id, payload, perr := parseRelayFrame(body)
			if err = perr; err != nil {
				return
			}
			c.mu.Lock()
			rc := c.remotes[id]
			c.mu.Unlock()
			if rc != nil {
				rc.deliver(kind, shard, payload)
			}
			buf = nil
			continue
		}
		if cap(body) <= 64<<10 {
			buf = body
		}
		resp := new(Response)
		if err = json.Unmarshal(body, resp); err != nil {
			err = fmt.Errorf("control: decoding a response: %w", err)
			return
		}
		var fds []*os.File
		if c.fdc != nil {
			fds = c.fdc.take()
		}
		c.mu.Lock()
		ch := c.pending[resp.ID]
		rc := c.remotes[resp.ID]
		if ch != nil && resp.Relay == nil { // a relayed channel's frame is not its reply
			delete(c.pending, resp.ID)
		}
		c.mu.Unlock()
		switch {
		case ch != nil && resp.Relay == nil:
			if resp.Channel != nil {
				resp.fds, fds = fds, nil
				if rc != nil && resp.Channel.Remote {
					// Before the frames that follow it are read.
					rc.process(resp.Channel)
				}
			}
			ch <- resp
		case rc != nil && resp.Relay != nil:
			rc.relayed(resp.Relay)
		case resp.ID == 0 && resp.Error != "":
			// A connection-level error: the server hangs up after it.
			err = &RemoteError{Op: "connection", Code: resp.Code, Message: resp.Error}
		}
		closeFiles(fds) // descriptors nobody asked for
		if err != nil {
			return
		}
	}
}

// call sends a request and waits for its reply.
func (c *Client) call(req *Request) (*Response, error) {
	resp, fds, err := c.callFDs(req, nil)
	closeFiles(fds)
	return resp, err
}

// callFDs sends a request and waits for its reply, and returns the
// descriptors that came with it. registered, if not nil, is called with
// the request's id before it is sent, and whether the connection relays
// channels (a transport that carries no descriptors), so that frames
// that follow the reply find their channel.
func (c *Client) callFDs(req *Request, registered func(id uint64, remote bool)) (*Response, []*os.File, error) {
	ch := make(chan *Response, 1)
	c.mu.Lock()
	if c.remotes == nil {
		err := c.err
		c.mu.Unlock()
		return nil, nil, fmt.Errorf("control: %s: %w", req.Op, err)
	}
	c.nextID++
	req.ID = c.nextID
	c.pending[req.ID] = ch
	c.mu.Unlock()
	if registered != nil {
		registered(req.ID, c.fdc == nil)
	}
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
		return nil, nil, fmt.Errorf("control: %s: %w", req.Op, err)
	}
	resp, ok := <-ch
	if !ok {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return nil, nil, fmt.Errorf("control: %s: %w", req.Op, err)
	}
	if resp.Error != "" {
		closeFiles(resp.fds)
		return nil, nil, &RemoteError{Op: req.Op, Code: resp.Code, Message: resp.Error}
	}
	return resp, resp.fds, nil
}

// addRemote registers a relayed channel for the request id.
func (c *Client) addRemote(id uint64) *remoteChannel {
	rc := newRemoteChannel(id)
	c.mu.Lock()
	if c.remotes != nil {
		c.remotes[id] = rc
	} else {
		rc.gone()
	}
	c.mu.Unlock()
	return rc
}

func (c *Client) dropRemote(id uint64) {
	c.mu.Lock()
	if c.remotes != nil {
		delete(c.remotes, id)
	}
	c.mu.Unlock()
}

// List describes the tracepoints whose name matches pattern (a name or a
// glob such as "http:*"; all when empty).
func (c *Client) List(pattern string) ([]TracepointInfo, error) {
	resp, err := c.call(&Request{Op: OpList, Tracepoint: pattern})
	if err != nil {
		return nil, err
	}
	return resp.Tracepoints, nil
}

// Stats returns the counters of the tracepoints matching pattern (all
// when empty) and of every session.
func (c *Client) Stats(pattern string) ([]TracepointInfo, []SessionInfo, error) {
	resp, err := c.call(&Request{Op: OpStats, Tracepoint: pattern})
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
	// BufferSize is the size of a new session's rings (default: the
	// server's); Mode its channel's mode ("discard", "overwrite",
	// "block"), BlockTimeout a firing's wait in block mode (0: 1 s;
	// negative: none); FileBacked puts the channel in a file that outlives
	// a crash.
	BufferSize   int
	Mode         string
	BlockTimeout time.Duration
	FileBacked   bool
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
		Mode: o.Mode, BlockTimeout: int64(o.BlockTimeout), FileBacked: o.FileBacked,
	})
	if err != nil {
		return SessionInfo{}, err
	}
	if len(resp.Sessions) != 1 {
		return SessionInfo{}, fmt.Errorf("control: enable: %d sessions in the reply", len(resp.Sessions))
	}
	return resp.Sessions[0], nil
}

// Disable closes a session: its attachments, its channel and its
// objects. It returns the attachments it closed.
func (c *Client) Disable(session uint64) ([]AttachmentInfo, error) {
	resp, err := c.call(&Request{Op: OpDisable, Session: session})
	if err != nil {
		return nil, err
	}
	return resp.Disabled, nil
}

// DisableAttachment closes one attachment; its session stays.
func (c *Client) DisableAttachment(id uint64) (AttachmentInfo, error) {
	resp, err := c.call(&Request{Op: OpDisable, Attachment: id})
	if err != nil || len(resp.Disabled) != 1 {
		return AttachmentInfo{}, err
	}
	return resp.Disabled[0], nil
}

// MapLookup returns the value under key in a map of the session's
// objects.
func (c *Client) MapLookup(session uint64, mapName string, key []byte) ([]byte, error) {
	resp, err := c.call(&Request{Op: OpMapLookup, Session: session, Map: mapName, Key: key})
	if err != nil {
		return nil, err
	}
	return resp.Value, nil
}

// MapUpdate stores value under key; flags are BPF_ANY (0), BPF_NOEXIST
// (1), BPF_EXIST (2).
func (c *Client) MapUpdate(session uint64, mapName string, key, value []byte, flags uint64) error {
	_, err := c.call(&Request{Op: OpMapUpdate, Session: session, Map: mapName, Key: key, Value: value, Flags: flags})
	return err
}

// MapDelete removes key.
func (c *Client) MapDelete(session uint64, mapName string, key []byte) error {
	_, err := c.call(&Request{Op: OpMapDelete, Session: session, Map: mapName, Key: key})
	return err
}

// MapIterate returns up to max entries of the map (0: the server's
// limit), and whether they are all of them.
func (c *Client) MapIterate(session uint64, mapName string, max int) ([]Entry, bool, error) {
	resp, err := c.call(&Request{Op: OpMapIterate, Session: session, Map: mapName, Max: max})
	if err != nil {
		return nil, false, err
	}
	return resp.Entries, resp.End, nil
}
