package control

import (
	"fmt"
	"os"
	"time"
)

// openChannel answers a channel or snapshot request: the reply carries the
// session's channel files (SCM_RIGHTS). A channel request makes the
// connection the session's consumer, which it stays until it releases
// the channel or closes; a snapshot hands over the data alone, to read
// beside the consumer, and holds nothing.
func (c *conn) openChannel(req *Request) error {
	ss, err := c.s.session(req.Session)
	if err != nil {
		return fmt.Errorf("%s: %w", req.Op, err)
	}
	snapshot := req.Op == OpSnapshot
	if !snapshot {
		ss.mu.Lock()
		holder := ss.consumer
		if holder == nil && !ss.closed {
			ss.consumer = c
		}
		ss.mu.Unlock()
		switch {
		case holder != nil && holder != c:
			return fail(CodeBusy, "%s: session %d has a consumer already (another connection holds its channel)", req.Op, ss.id)
		case holder == c:
			return fail(CodeBusy, "%s: this connection holds session %d's channel already", req.Op, ss.id)
		}
		c.mu.Lock()
		c.channels[ss.id] = ss
		c.mu.Unlock()
	}
	data, pos, err := ss.ts.Files()
	if err != nil {
		if !snapshot {
			c.release(ss.id)
		}
		return &codedError{CodeNotFound, fmt.Errorf("%s: session %d: %w", req.Op, ss.id, err)}
	}
	defer data.Close()
	defer pos.Close()
	fds := []*os.File{data, pos}
	if snapshot {
		fds = fds[:1]
	}
	f, err := encodeFrame(&Response{ID: req.ID, Channel: &ChannelInfo{
		Session: ss.id, Shards: ss.ts.Shards(), BufferSize: ss.ts.BufferSize(), Mode: ss.ts.Mode().String(),
	}})
	if err != nil {
		return &codedError{CodeInternal, err}
	}
	c.wmu.Lock()
	c.c.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
	err = writeWithFDs(c.c, f, fds)
	c.wmu.Unlock()
	if err != nil {
		c.log.Debug("client write", "err", err)
		c.c.Close()
	}
	return nil
}

// release gives a session's channel back: the session has no consumer.
func (c *conn) release(id uint64) error {
	c.mu.Lock()
	ss := c.channels[id]
	delete(c.channels, id)
	c.mu.Unlock()
	if ss == nil {
		return fail(CodeNotFound, "release: this connection holds no channel of session %d", id)
	}
	ss.mu.Lock()
	if ss.consumer == c {
		ss.consumer = nil
	}
	ss.mu.Unlock()
	return nil
}

// releaseAll gives back every channel the connection holds: it closed.
func (c *conn) releaseAll() {
	c.mu.Lock()
	ids := make([]uint64, 0, len(c.channels))
	for id := range c.channels {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.release(id)
	}
}
