package ctf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/tracepoint"
)

// FlushInterval makes Record flush the packets being filled when they
// hold events older than d, so that the trace on disk lags the session by
// about d at most (trimmed packets, smaller than PacketSize, are the
// cost). Without it packets are written as they fill and at the end.
func FlushInterval(d time.Duration) Option { return func(c *config) { c.flushInterval = d } }

// Rotate makes Record write a sequence of complete traces, one
// subdirectory of the trace directory each (chunk-000000, chunk-000001,
// ...): the next starts when the current one's streams hold size bytes
// (if size > 0) or when it is every old (if every > 0). Each is closed,
// and readable, when the next starts.
func Rotate(size int64, every time.Duration) Option {
	return func(c *config) { c.rotateSize, c.rotateEvery = size, every }
}

// StopBudget bounds how long Record goes on reading after its context is
// done (unless the cause is ErrGone): a session whose events keep coming
// never holds it up longer.
const StopBudget = 100 * time.Millisecond

// ErrGone is the cause to cancel Record's context with when the producing
// process is gone (it exited or was killed): Record then reads everything
// the channel still holds, however long that takes, before it closes the
// trace.
var ErrGone = errors.New("the producing process is gone")

// RecordStats say what Record wrote.
type RecordStats struct {
	// Events were written into the trace.
	Events uint64
	// Dropped events found no room in the session's rings: the trace
	// counts them as discarded. Overwritten ones made room for newer ones
	// (overwrite mode).
	Dropped, Overwritten uint64
	// Lost counts bytes overwritten before they were read, Skipped bytes
	// of records that did not hold together, Bad records that did not
	// match their layout (a hostile or crashed producer).
	Lost, Skipped, Bad uint64
	// Chunks is the number of traces written (1 unless Rotate).
	Chunks int
}

// Record writes the events of session s into a new trace in dir until ctx
// is done or s is closed, as RecordChannel does with s's reader: nothing
// else should read s meanwhile.
func Record(ctx context.Context, s *tracepoint.Session, dir string, opts ...Option) (RecordStats, error) {
	r, err := s.Reader()
	if err != nil {
		return RecordStats{}, err
	}
	return RecordChannel(ctx, r, dir, opts...)
}

// pollMin and pollMax bound the pauses of a Record that finds the rings
// empty: short while events come, longer when none do.
const (
	pollMin = 50 * time.Microsecond
	pollMax = 10 * time.Millisecond
)

// maxBatch bounds the records read from one ring before the next ring's
// turn, so that the stop is looked at often.
const maxBatch = 4096

// Source is what RecordChannel reads: a channel's records, by ring. A
// *tracepoint.ChannelReader is one; so is what reads the channel of an
// application on another machine (package control).
type Source interface {
	// Process is the producing process's pid, name and clock offset
	// (CLOCK_REALTIME - CLOCK_MONOTONIC there, in ns).
	Process() (pid int, name string, clockOffset int64)
	Shards() int
	// Read hands fn up to max records of ring shard (0: no bound).
	Read(shard, max int, fn func(*tracepoint.Event)) (int, error)
	ShardStats(shard int) tracepoint.ChannelStats
	Stats() tracepoint.ChannelStats
	// Pending reports records not read yet; Closed a channel that will
	// get no more.
	Pending() bool
	Closed() bool
	// Wait waits up to d for records.
	Wait(d time.Duration)
}

// RecordChannel writes the records a Source reads into a new trace
// in dir, one stream per ring, until the channel is closed (its session
// was) and read to its end, or ctx is done: then it reads what the rings
// hold for StopBudget at most (or all of it, when ctx's cause is ErrGone)
// and closes the trace. The events the rings had no room for are counted
// as discarded in their streams. The trace is the producing process's:
// its pid, name and clock offset are the channel's unless opts say
// otherwise.
func RecordChannel(ctx context.Context, r Source, dir string, opts ...Option) (RecordStats, error) {
	pid, name, off := r.Process()
	opts = append([]Option{Vpid(pid), Procname(name), ClockOffset(off)}, opts...)
	rec, err := newRecorder(dir, opts)
	if err != nil {
		return RecordStats{}, err
	}
	st, err := rec.run(ctx, r)
	if cerr := rec.w.Close(); err == nil {
		err = cerr
	}
	if rec.parent != nil {
		rec.parent.Close()
	}
	cs := r.Stats()
	st.Dropped, st.Overwritten, st.Lost, st.Skipped, st.Bad = cs.Dropped, cs.Overwritten, cs.Lost, cs.Skipped, cs.Bad
	st.Chunks = rec.chunks
	return st, err
}

// recorder is Record's state: the trace being written, and the chunks of
// a rotating one.
type recorder struct {
	dir    string
	opts   []Option
	cfg    config
	w      *Writer
	parent *safefs.Dir // the directory of the chunks, when rotating
	chunks int
	start  time.Time // of the current chunk
	base   []uint64  // each ring's drops before the current chunk
}

func newRecorder(dir string, opts []Option) (*recorder, error) {
	rec := &recorder{dir: dir, opts: opts}
	for _, o := range opts {
		o(&rec.cfg)
	}
	if rec.cfg.rotateSize <= 0 && rec.cfg.rotateEvery <= 0 {
		w, err := Create(dir, opts...)
		if err != nil {
			return nil, err
		}
		rec.w, rec.chunks, rec.start = w, 1, time.Now()
		return rec, nil
	}
	d, err := safefs.MakeDir(dir, 0o755)
	if err != nil {
		return nil, fmt.Errorf("ctf: trace %w", err)
	}
	rec.parent = d
	if err := rec.next(nil); err != nil {
		d.Close()
		return nil, err
	}
	return rec, nil
}

// next closes the current chunk, if any, and starts the next one.
func (rec *recorder) next(r Source) error {
	if rec.w != nil {
		if err := rec.w.Close(); err != nil {
			return err
		}
		for i := range rec.base {
			rec.base[i] = r.ShardStats(i).Dropped
		}
	}
	name := fmt.Sprintf("chunk-%06d", rec.chunks)
	d, err := rec.parent.Mkdir(name, 0o755)
	if err != nil {
		return fmt.Errorf("ctf: trace %s: %w", rec.dir, err)
	}
	w, err := createIn(d, rec.dir+string(os.PathSeparator)+name, rec.opts)
	if err != nil {
		d.Close()
		return err
	}
	rec.w, rec.start = w, time.Now()
	rec.chunks++
	return nil
}

func (rec *recorder) run(ctx context.Context, r Source) (RecordStats, error) {
	var (
		st      RecordStats
		werr    error
		flushed = time.Now()
		stopped time.Time // when ctx was done
		all     bool      // read everything: the producer is gone
		pause   = pollMin
	)
	rec.base = make([]uint64, r.Shards())
	write := func(ev *tracepoint.Event) {
		if werr == nil {
			werr = rec.w.WriteEvent(ev)
		}
	}
	for {
		n := 0
		for i := range r.Shards() {
			k, err := r.Read(i, maxBatch, write)
			n += k
			if err != nil {
				return st, fmt.Errorf("ctf: trace %s: %w", rec.dir, err)
			}
			if werr != nil {
				return st, werr
			}
			if err := rec.w.SetDiscarded(i, r.ShardStats(i).Dropped-rec.base[i]); err != nil {
				return st, err
			}
		}
		st.Events += uint64(n)
		now := time.Now()
		if rec.parent != nil && (rec.cfg.rotateSize > 0 && rec.w.Written() >= rec.cfg.rotateSize ||
			rec.cfg.rotateEvery > 0 && now.Sub(rec.start) >= rec.cfg.rotateEvery) {
			if err := rec.next(r); err != nil {
				return st, err
			}
		}
		if iv := rec.cfg.flushInterval; iv > 0 && now.Sub(flushed) >= iv {
			if err := rec.w.Flush(); err != nil {
				return st, err
			}
			flushed = now
		}
		if stopped.IsZero() && ctx.Err() != nil {
			stopped, all = now, errors.Is(context.Cause(ctx), ErrGone)
		}
		switch {
		case !stopped.IsZero() && !all && now.Sub(stopped) >= StopBudget:
			return st, nil
		case n > 0:
			pause = pollMin
			continue
		case !stopped.IsZero() || r.Closed():
			if !r.Pending() {
				return st, nil
			}
			continue
		}
		r.Wait(pause)
		pause = min(2*pause, pollMax)
	}
}
