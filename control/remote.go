package control

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// A stdio transport (ssh) carries no descriptors: its far end, ServeStdio,
// maps a channel the server hands over and relays its records to the
// client in binary frames, which the client's Channel reads as it would
// read the rings (see doc.go, "Channels").
//
// A binary frame's length word has binaryFrame set; its body is
//
//	u8 kind, 3 bytes 0, u32 ring, u64 id (the channel request's)
//	kind relayRecords: records, each u32 length (of the 8-byte header and
//	                   the body), u32 tag, body
//	kind relayMeta:    the channel's metadata bytes, appended to the last
//
// and JSON frames with the request's id carry the channel's counters and
// its end (Response.Relay).
const (
	binaryFrame    = 1 << 31
	relayRecords   = 1
	relayMeta      = 2
	relayHeader    = 16
	maxRelayFrame  = 1 << 20
	maxRelayQueued = 16 << 20 // what a client holds of a relayed channel before its read loop waits
)

// RelayInfo is a relayed channel's state, sent by the far end.
type RelayInfo struct {
	Shards []ShardStats `json:"shards"`
	// End marks the last frame; Reason says why.
	End    bool   `json:"end,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ShardStats are one ring's counters.
type ShardStats struct {
	Records     uint64 `json:"records"`
	Dropped     uint64 `json:"dropped"`
	Overwritten uint64 `json:"overwritten,omitempty"`
}

// remoteChannel is a relayed channel as the client's read loop fills it.
type remoteChannel struct {
	id          uint64
	pid         int
	name        string
	clockOffset int64
	shards      int
	dec         tracepoint.Decoder
	ev          tracepoint.Event

	mu sync.Mutex
	// queues are the batches read may take, by ring; staged those of the
	// relay's round being received, which join them at the round's end
	// (its counters' frame), so that a read sees whole rounds of every
	// ring, as it would reading the rings (events then merge in order).
	queues  [][]relayBatch
	staged  [][]relayBatch
	queued  int
	stat    []tracepoint.ChannelStats
	end     bool
	reason  string
	stopped bool
	err     error
	notify  chan struct{}
	room    chan struct{}
}

type relayBatch struct {
	b   []byte
	off int
}

func newRemoteChannel(id uint64) *remoteChannel {
	return &remoteChannel{id: id, notify: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// process takes what the relay's reply says of the channel.
func (rc *remoteChannel) process(info *ChannelInfo) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.pid, rc.name, rc.clockOffset = info.PID, info.Process, info.ClockOffset
	rc.shards = min(max(info.Shards, 0), 1024)
	for len(rc.queues) < rc.shards {
		rc.queues = append(rc.queues, nil)
		rc.staged = append(rc.staged, nil)
		rc.stat = append(rc.stat, tracepoint.ChannelStats{})
	}
}

// deliver takes a binary frame's body: the read loop's, its own copy. It
// waits while the client holds too much of the channel unread, unless
// the channel was stopped.
func (rc *remoteChannel) deliver(kind uint8, shard int, payload []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for rc.queued > maxRelayQueued && !rc.stopped {
		rc.mu.Unlock()
		<-rc.room
		rc.mu.Lock()
	}
	if rc.stopped {
		return
	}
	switch kind {
	case relayMeta:
		if err := rc.dec.AddLayouts(payload); err != nil && rc.err == nil {
			rc.err = err
		}
	case relayRecords:
		if shard < 0 || shard >= len(rc.queues) {
			if rc.err == nil {
				rc.err = fmt.Errorf("control: relayed records of ring %d (the channel has %d)", shard, len(rc.queues))
			}
			return
		}
		rc.staged[shard] = append(rc.staged[shard], relayBatch{b: payload})
		rc.queued += len(payload)
	}
}

// relayed takes a JSON frame of the relay: counters, the end.
func (rc *remoteChannel) relayed(info *RelayInfo) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, s := range info.Shards {
		if i < len(rc.stat) {
			rc.stat[i] = tracepoint.ChannelStats{Records: s.Records, Dropped: s.Dropped, Overwritten: s.Overwritten}
		}
	}
	for i, b := range rc.staged {
		rc.queues[i] = append(rc.queues[i], b...)
		rc.staged[i] = nil
	}
	if info.End {
		rc.end, rc.reason = true, info.Reason
	}
	rc.wake()
}

// gone ends the channel: the connection ended.
func (rc *remoteChannel) gone() {
	rc.mu.Lock()
	for i, b := range rc.staged {
		rc.queues[i] = append(rc.queues[i], b...)
		rc.staged[i] = nil
	}
	if !rc.end {
		rc.end, rc.reason = true, "connection closed"
	}
	rc.wake()
	rc.mu.Unlock()
}

func (rc *remoteChannel) wake() {
	select {
	case rc.notify <- struct{}{}:
	default:
	}
}

func (rc *remoteChannel) read(shard, max int, fn func(*tracepoint.Event)) (int, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.err != nil {
		return 0, rc.err
	}
	if shard < 0 || shard >= len(rc.queues) {
		return 0, fmt.Errorf("control: ring %d of %d", shard, len(rc.queues))
	}
	n := 0
	q := rc.queues[shard]
	for len(q) > 0 && (max <= 0 || n < max) {
		bt := &q[0]
		for bt.off+8 <= len(bt.b) && (max <= 0 || n < max) {
			l := int(binary.LittleEndian.Uint32(bt.b[bt.off:]))
			if l < 8 || l > len(bt.b)-bt.off {
				bt.off = len(bt.b) // a frame that does not hold: the rest of it goes
				break
			}
			tag := binary.LittleEndian.Uint32(bt.b[bt.off+4:])
			body := bt.b[bt.off+8 : bt.off+l : bt.off+l]
			bt.off += l
			if rc.dec.Decode(tag, body, &rc.ev) == nil {
				rc.ev.Shard = shard
				fn(&rc.ev)
				n++
			}
		}
		if bt.off+8 > len(bt.b) {
			rc.queued -= len(bt.b)
			q = q[1:]
		}
	}
	rc.queues[shard] = q
	if rc.queued <= maxRelayQueued {
		select {
		case rc.room <- struct{}{}:
		default:
		}
	}
	return n, nil
}

func (rc *remoteChannel) pending() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.queued > 0
}

func (rc *remoteChannel) ended() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.end
}

func (rc *remoteChannel) wait(d time.Duration) {
	if rc.pending() || rc.ended() {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-rc.notify:
	case <-t.C:
	}
}

func (rc *remoteChannel) shardStats(i int) tracepoint.ChannelStats {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if i < 0 || i >= len(rc.stat) {
		return tracepoint.ChannelStats{}
	}
	return rc.stat[i]
}

func (rc *remoteChannel) stats() tracepoint.ChannelStats {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var st tracepoint.ChannelStats
	for _, s := range rc.stat {
		st.Records += s.Records
		st.Dropped += s.Dropped
		st.Overwritten += s.Overwritten
	}
	st.Bad = rc.dec.Bad()
	return st
}

// stop discards what is queued and all that comes: the read loop never
// waits for this channel again.
func (rc *remoteChannel) stop() {
	rc.mu.Lock()
	rc.stopped = true
	for i := range rc.queues {
		rc.queues[i], rc.staged[i] = nil, nil
	}
	rc.queued = 0
	rc.mu.Unlock()
	select {
	case rc.room <- struct{}{}:
	default:
	}
}

// appendRelayHeader starts a binary frame of kind for ring shard of the
// channel opened by request id.
func appendRelayHeader(b []byte, kind uint8, shard uint32, id uint64) []byte {
	b = append(b, 0, 0, 0, 0) // the length, finishRelayFrame's
	b = append(b, kind, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, shard)
	return binary.LittleEndian.AppendUint64(b, id)
}

func finishRelayFrame(b []byte) []byte {
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4)|binaryFrame)
	return b
}

// parseRelayFrame splits a binary frame's body.
func parseRelayFrame(body []byte) (kind uint8, shard int, id uint64, payload []byte, err error) {
	if len(body) < relayHeader {
		return 0, 0, 0, nil, fmt.Errorf("control: relayed frame of %d bytes", len(body))
	}
	return body[0], int(binary.LittleEndian.Uint32(body[4:])), binary.LittleEndian.Uint64(body[8:]), body[relayHeader:], nil
}
