package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// ServeStdio proxies one client connection, read from in and written to
// out (a process's stdin and stdout, under ssh), to the control socket
// s, until either side closes or ctx is done. It is what "uebpf trace
// --stdio" runs on a remote machine: ssh authenticates and carries the
// bytes, and the socket's own checks still apply to the process running
// ServeStdio. The server is checked as Socket.Dial checks it, before a
// byte of in is sent to it. A pipe carries no descriptors: the channels
// the server hands over are mapped here and their records relayed to the
// client in binary frames; when the application goes, what they still
// hold is relayed before the connection ends.
func ServeStdio(ctx context.Context, s Socket, in io.Reader, out io.Writer) error {
	c, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rl := &relay{server: c, fdc: newFDConn(c), out: out, want: map[uint64]relayWant{}, pumps: map[uint64]*pump{}}
	fromClient, fromServer := make(chan error, 1), make(chan error, 1)
	go func() { fromClient <- rl.fromClient(in) }()
	go func() { fromServer <- rl.fromServer() }()
	select {
	case <-ctx.Done():
		rl.stopAll("interrupted")
		return fmt.Errorf("control: stdio: %w", ctx.Err())
	case err = <-fromServer:
		// The server hung up: the application exited, or closed its
		// socket. The copy from in ends at its next read (it cannot be
		// interrupted; a process exits anyway).
	case err = <-fromClient:
		// The client is done sending: let the server see EOF, and keep
		// relaying its last replies and records.
		c.CloseWrite()
		if err == nil {
			select {
			case err = <-fromServer:
			case <-ctx.Done():
				rl.stopAll("interrupted")
				return fmt.Errorf("control: stdio: %w", ctx.Err())
			}
		}
	}
	rl.finish()
	if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("control: stdio: %w", err)
	}
	return nil
}

// relay is ServeStdio's state.
type relay struct {
	server *net.UnixConn
	fdc    *fdConn
	out    io.Writer

	wmu sync.Mutex // whole frames to out

	mu    sync.Mutex
	want  map[uint64]relayWant // channel requests not answered yet, by id
	pumps map[uint64]*pump     // by request id
	wg    sync.WaitGroup
}

type relayWant struct {
	session  uint64
	snapshot bool
}

// peek is what the relay reads of a frame it passes on.
type peek struct {
	ID      uint64       `json:"id"`
	Op      string       `json:"op"`
	Session uint64       `json:"session"`
	Channel *ChannelInfo `json:"channel"`
}

// fromClient passes the client's requests on, noting the channel
// requests and stopping the relays a release gives back.
func (rl *relay) fromClient(in io.Reader) error {
	var buf []byte
	for {
		body, err := readFrame(in, buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var p peek
		if json.Unmarshal(body, &p) == nil {
			switch p.Op {
			case OpChannel, OpSnapshot:
				rl.mu.Lock()
				rl.want[p.ID] = relayWant{session: p.Session, snapshot: p.Op == OpSnapshot}
				rl.mu.Unlock()
			case OpRelease:
				rl.stopSession(p.Session, "released")
			}
		}
		if _, err := rl.server.Write(frameOf(body)); err != nil {
			return err
		}
		if cap(body) <= 64<<10 {
			buf = body
		}
	}
}

// fromServer passes the server's replies on; a channel's reply starts the
// relay of its records.
func (rl *relay) fromServer() error {
	for {
		body, err := readFrame(rl.fdc, nil)
		if err != nil {
			return err
		}
		fds := rl.fdc.take()
		var p peek
		json.Unmarshal(body, &p)
		rl.mu.Lock()
		w, wanted := rl.want[p.ID]
		delete(rl.want, p.ID)
		rl.mu.Unlock()
		var p2 *pump
		if wanted && p.Channel != nil {
			body, p2 = rl.start(p.ID, w, p.Channel, fds)
		}
		closeFiles(fds)
		err = rl.write(frameOf(body))
		if p2 != nil {
			// After the reply: the client reads the channel's frames
			// once it knows the channel.
			rl.run(p2)
		}
		if err != nil {
			return err
		}
	}
}

// start maps a channel the server handed over; it returns the reply to
// pass on, and the pump that relays the channel once the reply went.
func (rl *relay) start(id uint64, w relayWant, info *ChannelInfo, fds []*os.File) ([]byte, *pump) {
	want := 2
	if w.snapshot {
		want = 1
	}
	var r *tracepoint.ChannelReader
	err := fmt.Errorf("%d descriptors, want %d: %w", len(fds), want, ErrNoChannel)
	if len(fds) == want {
		var pos *os.File
		if !w.snapshot {
			pos = fds[1]
		}
		r, err = tracepoint.MapChannel(fds[0], pos)
	}
	if err != nil {
		b, _ := json.Marshal(&Response{ID: id, Error: fmt.Sprintf("relay: session %d: %v", w.session, err), Code: CodeInternal})
		return b, nil
	}
	relayed := *info
	relayed.Remote = true
	relayed.PID, relayed.Process, relayed.ClockOffset = r.Process()
	relayed.Shards = r.Shards()
	b, _ := json.Marshal(&Response{ID: id, Channel: &relayed})
	return b, &pump{rl: rl, id: id, session: w.session, snapshot: w.snapshot, r: r, stop: make(chan string, 1), gone: make(chan struct{})}
}

// run starts a pump.
func (rl *relay) run(p *pump) {
	rl.mu.Lock()
	rl.pumps[p.id] = p
	rl.mu.Unlock()
	rl.wg.Add(1)
	go func() {
		defer rl.wg.Done()
		p.run()
	}()
}

// write writes a frame to the client.
func (rl *relay) write(f []byte) error {
	rl.wmu.Lock()
	defer rl.wmu.Unlock()
	_, err := rl.out.Write(f)
	return err
}

func (rl *relay) stopSession(session uint64, why string) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, p := range rl.pumps {
		if p.session == session {
			p.halt(why)
		}
	}
}

func (rl *relay) stopAll(why string) {
	rl.mu.Lock()
	for _, p := range rl.pumps {
		p.halt(why)
	}
	rl.mu.Unlock()
	rl.wg.Wait()
}

// finish ends the relays once the server is gone: each sends what its
// channel still holds, then its end.
func (rl *relay) finish() {
	rl.mu.Lock()
	for _, p := range rl.pumps {
		close(p.gone)
	}
	rl.mu.Unlock()
	rl.wg.Wait()
}

// frameOf frames a JSON body.
func frameOf(body []byte) []byte {
	f, _ := finishFrame(append(appendFrameHeader(make([]byte, 0, 4+len(body))), body...))
	return f
}

// pump relays one channel's records to the client.
type pump struct {
	rl       *relay
	id       uint64
	session  uint64
	snapshot bool
	r        *tracepoint.ChannelReader
	stop     chan string   // a release, or the relay ends: why
	gone     chan struct{} // the server is gone: relay what is left
	once     sync.Once

	buf     []byte
	meta    uint64 // metadata bytes sent
	layouts int    // layouts the client can decode
	err     error
}

func (p *pump) halt(why string) {
	p.once.Do(func() { p.stop <- why })
}

func (p *pump) run() {
	defer p.r.Close()
	defer func() {
		p.rl.mu.Lock()
		delete(p.rl.pumps, p.id)
		p.rl.mu.Unlock()
	}()
	reason := ""
	gone, goneC := false, p.gone
	pause := 50 * time.Microsecond
	lastStats := time.Time{}
	for reason == "" && p.err == nil {
		select {
		case reason = <-p.stop:
			continue
		case <-goneC:
			gone, goneC = true, nil
		default:
		}
		n := 0
		for shard := range p.r.Shards() {
			p.buf = appendRelayHeader(p.buf[:0], relayRecords, uint32(shard), p.id)
			k, err := p.r.Read(shard, 4096, func(ev *tracepoint.Event) { p.add(shard, ev) })
			if err != nil && p.err == nil {
				p.err = err
			}
			p.flush()
			n += k
		}
		if n > 0 || time.Since(lastStats) > 100*time.Millisecond {
			p.sendStats("")
			lastStats = time.Now()
		}
		switch {
		case n > 0:
			pause = 50 * time.Microsecond
			continue
		case p.r.Pending():
			continue
		case p.snapshot:
			reason = "snapshot read"
		case p.r.Closed():
			reason = "session disabled"
		case gone:
			reason = "application gone"
		default:
			p.r.Wait(pause)
			pause = min(2*pause, 10*time.Millisecond)
		}
	}
	if p.err != nil {
		reason = p.err.Error()
	}
	p.sendStats(reason)
}

// add appends a record to the frame being filled, sending the layouts it
// needs first and the frame when it is full.
func (p *pump) add(shard int, ev *tracepoint.Event) {
	if int(ev.Index) >= p.layouts {
		p.flush()
		if b, err := p.r.Meta(p.meta); err == nil && len(b) > 0 {
			for len(b) > 0 && p.err == nil {
				k := min(len(b), maxRelayFrame)
				p.send(finishRelayFrame(append(appendRelayHeader(nil, relayMeta, 0, p.id), b[:k]...)))
				p.meta += uint64(k)
				b = b[k:]
			}
		}
		p.layouts = len(p.r.Layouts())
	}
	if len(p.buf)+8+len(ev.Body) > maxRelayFrame {
		p.flush()
	}
	p.buf = append(p.buf, byte(8+len(ev.Body)), byte((8+len(ev.Body))>>8), byte((8+len(ev.Body))>>16), byte((8+len(ev.Body))>>24))
	t := ev.Tag()
	p.buf = append(p.buf, byte(t), byte(t>>8), byte(t>>16), byte(t>>24))
	p.buf = append(p.buf, ev.Body...)
}

// flush sends the frame being filled, if it holds records, and starts
// another for the same ring.
func (p *pump) flush() {
	if len(p.buf) <= 4+relayHeader {
		return
	}
	p.send(finishRelayFrame(p.buf))
	hdr := append([]byte(nil), p.buf[4:4+relayHeader]...)
	p.buf = append(append(p.buf[:0], 0, 0, 0, 0), hdr...)
}

func (p *pump) send(f []byte) {
	if p.err == nil {
		p.err = p.rl.write(f)
	}
}

// sendStats sends the channel's counters, and its end when reason is set.
func (p *pump) sendStats(reason string) {
	info := &RelayInfo{End: reason != "", Reason: reason}
	for i := range p.r.Shards() {
		st := p.r.ShardStats(i)
		info.Shards = append(info.Shards, ShardStats{Records: st.Records, Dropped: st.Dropped, Overwritten: st.Overwritten})
	}
	if b, err := json.Marshal(&Response{ID: p.id, Relay: info}); err == nil {
		p.send(frameOf(b))
	}
}
