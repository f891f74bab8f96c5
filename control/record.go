package control

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// recordFlushInterval bounds how far a trace Record writes lags its
// stream: the packet being filled is flushed when it is older.
const recordFlushInterval = time.Second

// Record streams a session of the server into a new CTF trace in dir
// (package tracepoint/ctf), as "uebpf trace record" does, until ctx is done
// or the stream ends (the session disabled, the server gone); then it
// stops the stream, writes the events sent before, and closes the trace.
// The trace is the server process's: its pid, name and clock offset are
// the handshake's unless opts say otherwise, and the events the session
// dropped count as discarded. A tool that can link against the
// application's tracepoints uses ctf.Record on a tracepoint.Session; this
// is for one that reaches the application through its control socket.
func (c *Client) Record(ctx context.Context, session uint64, dir string, opts ...ctf.Option) (err error) {
	tps, err := c.List("")
	if err != nil {
		return err
	}
	infos := make(map[string]tracepoint.Info, len(tps))
	for _, tp := range tps {
		info, err := tp.Info()
		if err != nil {
			return fmt.Errorf("control: record: %w", err)
		}
		infos[tp.Name] = info
	}
	st, err := c.Stream(session)
	if err != nil {
		return err
	}
	opts = append([]ctf.Option{ctf.Vpid(c.pid), ctf.Procname(c.process), ctf.ClockOffset(c.clockOffset)}, opts...)
	w, err := ctf.Create(dir, opts...)
	if err != nil {
		st.Stop()
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	var (
		dropped   uint64
		flushed   = time.Now()
		stopped   bool
		stopLimit time.Time // when a stopped stream is given up on
	)
	for {
		parent := ctx
		if stopped { // ctx is done: wait for the events sent before the end
			parent = context.Background()
		}
		wait, cancel := context.WithTimeout(parent, recordFlushInterval/4)
		ev, err := st.Next(wait)
		cancel()
		if d := st.Stats().Dropped; d > dropped {
			w.AddDiscarded(d - dropped)
			dropped = d
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
			return err
		case err != nil:
			if !stopped && ctx.Err() != nil {
				// Ask for the end; the events sent before it still come.
				if err := st.Stop(); err != nil {
					return err
				}
				stopped, stopLimit = true, time.Now().Add(5*time.Second)
			}
			if stopped && time.Now().After(stopLimit) {
				return fmt.Errorf("control: record: session %d: the stream did not end after stop", session)
			}
		default:
			info, ok := infos[ev.Tracepoint]
			if !ok {
				return fmt.Errorf("control: record: event of %q, which the server did not list", ev.Tracepoint)
			}
			payload, ctxBlock, err := encodeEvent(info, &ev)
			if err != nil {
				return fmt.Errorf("control: record: %w", err)
			}
			if err := w.WriteEvent(info, ctxBlock, payload); err != nil {
				return err
			}
		}
		if time.Since(flushed) >= recordFlushInterval {
			if err := w.Flush(); err != nil {
				return err
			}
			flushed = time.Now()
		}
	}
}

// Info describes the tracepoint as package tracepoint does, from what the
// server said: its fields' types, offsets and the payload's size, which
// are checked, not trusted (the payload is allocated from them).
func (t TracepointInfo) Info() (tracepoint.Info, error) {
	if t.Size <= 0 || t.Size > MaxFrameSize {
		return tracepoint.Info{}, fmt.Errorf("tracepoint %s: a payload of %d bytes", t.Name, t.Size)
	}
	spec := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		spec[i] = f.Name + ":" + f.Type
	}
	info, err := tracepoint.ParseSpec(t.Name, strings.Join(spec, ","))
	if err != nil {
		return tracepoint.Info{}, fmt.Errorf("tracepoint %s: %w", t.Name, err)
	}
	// The server's layout is the Go struct's, which may have padding of
	// its own: keep its offsets.
	for i := range info.Fields {
		f := t.Fields[i]
		if f.Offset < 0 || f.Size != info.Fields[i].Size || f.Offset+f.Size > t.Size {
			return tracepoint.Info{}, fmt.Errorf("tracepoint %s: field %s: %d bytes at %d do not fit its type or the %d-byte payload",
				t.Name, f.Name, f.Size, f.Offset, t.Size)
		}
		info.Fields[i].Offset = f.Offset
	}
	info.Size = t.Size
	return info, nil
}

// encodeEvent lays an event's fields and context out as the server's
// record had them.
func encodeEvent(info tracepoint.Info, ev *Event) ([]byte, *tracepoint.Context, error) {
	payload := make([]byte, info.Size)
	for _, f := range info.Fields {
		v := ev.Fields.Get(f.Name)
		if v == nil {
			return nil, nil, fmt.Errorf("event %s: no field %s", info.FullName(), f.Name)
		}
		if err := putField(payload[f.Offset:f.Offset+f.Size], f.Kind, v); err != nil {
			return nil, nil, fmt.Errorf("event %s: field %s: %w", info.FullName(), f.Name, err)
		}
	}
	ctx := &tracepoint.Context{TimestampNs: ev.TimestampNs, Vtid: ev.Vtid, Vpid: ev.Vpid, Goid: ev.Goid}
	copy(ctx.Procname[:len(ctx.Procname)-1], ev.Procname)
	return payload, ctx, nil
}

// putField writes the value v, as Fields decodes it, into b as a field of
// kind k.
func putField(b []byte, k tracepoint.Kind, v any) error {
	var u uint64
	switch k {
	case tracepoint.String:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%v is not a string", v)
		}
		copy(b, s) // a string of N bytes has no NUL, as in the record
		return nil
	case tracepoint.Bool:
		t, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%v is not a bool", v)
		}
		if t {
			b[0] = 1
		}
		return nil
	case tracepoint.Float:
		x, err := floatValue(v)
		if err != nil {
			return err
		}
		if len(b) == 4 {
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x)))
			return nil
		}
		u = math.Float64bits(x)
	default:
		switch n := v.(type) {
		case int64:
			u = uint64(n)
		case uint64:
			u = n
		default:
			return fmt.Errorf("%v is not an integer", v)
		}
	}
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
	return nil
}

// floatValue reads a float field's value: a number, or the strings
// JSON cannot hold as numbers.
func floatValue(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "+Inf":
			return math.Inf(1), nil
		case "-Inf":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("%v is not a number", v)
}
