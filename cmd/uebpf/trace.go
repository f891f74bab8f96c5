package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/uebpf/uebpf/control"
	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// The trace commands drive the tracepoints of a running application
// through its control socket (package control), as lttng drives
// lttng-sessiond: on this machine by pid or socket path, or on another
// one through ssh, where "uebpf trace --stdio" carries the connection.

// target is where a trace command's application is: the flags every
// trace command but ps shares.
type target struct {
	pid      int
	socket   string
	ssh      string // [user@]host
	sshBin   string // the uebpf binary on the ssh host
	remote   string // a command that reaches the application through "trace --stdio"
	jsonMode bool
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.IntVar(&t.pid, "pid", 0, "the application's `pid` (its socket is found in the default directories; the server must be that process)")
	fs.StringVar(&t.socket, "socket", "", "the application's control socket `path`, instead of --pid")
	fs.StringVar(&t.ssh, "ssh", "", "reach the application on `[user@]host` through ssh, which runs \"uebpf trace --stdio\" there")
	fs.StringVar(&t.sshBin, "ssh-uebpf", "uebpf", "the uebpf `command` on the ssh host")
	fs.StringVar(&t.remote, "remote", "", "reach the application through `command` (split at spaces) run with \"trace --stdio ...\"\nappended, speaking over its standard input and output (what --ssh does with \"ssh HOST uebpf\")")
	fs.BoolVar(&t.jsonMode, "json", false, "print JSON, one object per line")
}

// transport is the command that carries the connection, or nil to dial
// the socket here.
func (t *target) transport() ([]string, error) {
	switch {
	case t.ssh != "" && t.remote != "":
		return nil, usageError("--ssh and --remote exclude each other")
	case t.ssh != "":
		return []string{"ssh", "-T", "-o", "BatchMode=yes", "--", t.ssh, shellQuote(t.sshBin)}, nil
	case t.remote != "":
		return strings.Fields(t.remote), nil
	}
	return nil, nil
}

// where are the flags naming the socket, as "trace --stdio" takes them.
func (t *target) where() ([]string, error) {
	switch {
	case t.pid != 0 && t.socket != "":
		return nil, usageError("--pid and --socket exclude each other")
	case t.pid < 0:
		return nil, usageError(fmt.Sprintf("--pid %d: want a process id", t.pid))
	case t.pid != 0:
		return []string{"--pid", strconv.Itoa(t.pid)}, nil
	case t.socket != "":
		return []string{"--socket", t.socket}, nil
	}
	return nil, usageError("say which application: --pid PID or --socket PATH")
}

// dial connects to the target's control server.
func (t *target) dial(st streams) (*control.Client, error) {
	where, err := t.where()
	if err != nil {
		return nil, err
	}
	via, err := t.transport()
	if err != nil {
		return nil, err
	}
	if via == nil {
		s, err := socketOf(t.pid, t.socket)
		if err != nil {
			return nil, err
		}
		return s.Dial()
	}
	args := append(append(via[1:len(via):len(via)], "trace", "--stdio"), where...)
	if t.ssh != "" {
		for i := len(via) - 1; i < len(args); i++ { // the remote shell reads them
			args[i] = shellQuote(args[i])
		}
	}
	return dialCommand(exec.Command(via[0], args...), st.stderr)
}

// socketOf is the socket at path, whose server must run as the caller's
// uid or root's, or else the socket of pid, whose server must be process
// pid (control.FindSocket).
func socketOf(pid int, path string) (control.Socket, error) {
	if path != "" {
		return control.Socket{Path: path}, nil
	}
	return control.FindSocket(pid)
}

// dialCommand starts cmd, which serves a control connection on its
// standard input and output, and speaks to it.
func dialCommand(cmd *exec.Cmd, stderr io.Writer) (*control.Client, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	conn := &commandConn{cmd: cmd, in: in, out: out}
	if f, ok := stderr.(*os.File); ok {
		cmd.Stderr = f // the child writes it directly
	} else {
		// Another writer (a test's buffer) is not the child's to write
		// while this process writes it: its stderr is copied at Close.
		conn.stderr, conn.errBuf = stderr, new(bytes.Buffer)
		cmd.Stderr = conn.errBuf
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("trace: %s: %w", cmd.Path, err)
	}
	c, err := control.NewClient(conn)
	if err != nil {
		return nil, fmt.Errorf("trace: through %s: %w%s", strings.Join(cmd.Args, " "), err, notFoundHint(cmd))
	}
	return c, nil
}

// notFoundHint says what to do when the transport's command, or ssh's
// remote one, was not found (exit status 127, the shell's).
func notFoundHint(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 127 {
		return ""
	}
	if filepath.Base(cmd.Path) == "ssh" {
		return " (the remote shell found no uebpf command there: give its path with --ssh-uebpf)"
	}
	return " (the command was not found)"
}

// commandConn is a connection carried by a child process's standard
// input and output.
type commandConn struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  io.Reader
	once sync.Once
	// stderr receives errBuf, the child's standard error, at Close.
	stderr io.Writer
	errBuf *bytes.Buffer
}

func (c *commandConn) Read(p []byte) (int, error)  { return c.out.Read(p) }
func (c *commandConn) Write(p []byte) (int, error) { return c.in.Write(p) }

// Close ends the child's input, which ends the connection, and reaps it;
// one that does not go is killed.
func (c *commandConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
		if c.errBuf != nil {
			c.stderr.Write(c.errBuf.Bytes())
		}
	})
	return nil
}

// shellQuote quotes s for a POSIX shell (ssh hands the remote command to
// one).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// traceCommand builds a trace command whose body gets a connected client.
func traceCommand(name, args, summary, detail string, setup func(fs *flag.FlagSet, t *target) func(c *control.Client, pos []string, st streams) error) *command {
	return &command{
		name: "trace " + name, args: args, summary: summary, detail: detail,
		setup: func(fs *flag.FlagSet) func([]string, streams) error {
			t := &target{}
			t.flags(fs)
			body := setup(fs, t)
			return func(pos []string, st streams) error {
				c, err := t.dial(st)
				if err != nil {
					return refusal(err)
				}
				defer c.Close()
				return refusal(body(c, pos, st))
			}
		},
	}
}

// refusal makes the application's refusals of a request exit 2, as usage
// errors do: a filter that does not compile, a program the verifier
// refuses, a session that does not exist, a limit. Its failures (and
// the transport's) stay 1.
func refusal(err error) error {
	var re *control.RemoteError
	if errors.As(err, &re) && re.Code != control.CodeInternal {
		return badArgument{err}
	}
	return err
}

// traceHelp is what "uebpf help trace" says before the subcommands.
const traceHelp = `The trace commands drive the tracepoints of a running Go application that
serves a control socket (control.Listen), as lttng drives LTTng's session
daemon. Every trace command exits with status 0 when it did what was
asked (a recording whose application exited still ends with 0 once it has
written every event the application committed), 1 when it failed (the
socket could not be reached, a write failed), and 2 for a usage error or
a request the application refused (a filter that does not compile, a
program the verifier refuses, a session that does not exist, a limit):
the message says which.`

// interrupted is a context done at SIGINT or SIGTERM, or after d when d
// is positive.
func interrupted(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if d <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

var traceListCmd = traceCommand("list", "[PATTERN]", "list an application's tracepoints",
	`Trace list lists the tracepoints of the application whose name matches
PATTERN (a name or a glob such as 'http:*'; all without one), with their
payload fields and counters.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		return func(c *control.Client, pos []string, st streams) error {
			if len(pos) > 1 {
				return usageError("want at most one PATTERN")
			}
			tps, err := c.List(strings.Join(pos, ""))
			if err != nil {
				return err
			}
			for _, tp := range tps {
				if t.jsonMode {
					if err := printJSON(st.stdout, tp); err != nil {
						return err
					}
					continue
				}
				fields := make([]string, len(tp.Fields))
				for i, f := range tp.Fields {
					fields[i] = f.Name + ":" + f.Type
				}
				fmt.Fprintf(st.stdout, "%s { %s } %s\n", tp.Name, strings.Join(fields, ", "), statsText(tp.Stats))
			}
			return nil
		}
	})

// channelFlags are the flags of a new session's channel.
type channelFlags struct {
	size       *int
	mode       *string
	fileBacked *bool
}

func newChannelFlags(fs *flag.FlagSet) *channelFlags {
	return &channelFlags{
		size:       fs.Int("buffer-size", 0, "a new session's rings in all, in `bytes` (default: the application's; rounded up to a\npower of two per ring, one ring per CPU the application runs on: the reply says the size)"),
		mode:       fs.String("mode", "", "a new session's `mode` when its rings are full: discard (drop the new events: the default),\noverwrite (drop the oldest: a flight recorder, see trace snapshot), or block[:TIMEOUT]\n(the firing goroutine waits for the consumer up to TIMEOUT, 1s by default, or inf)"),
		fileBacked: fs.Bool("file-backed", false, "back a new session's channel with a file beside the application's socket, which\noutlives a crash of the application: uebpf trace recover reads it"),
	}
}

// apply sets what the flags say of a new session in o.
func (cf *channelFlags) apply(o *control.EnableOptions) error {
	o.BufferSize, o.FileBacked = *cf.size, *cf.fileBacked
	if *cf.size < 0 {
		return usageError(fmt.Sprintf("--buffer-size %d: want a size in bytes", *cf.size))
	}
	mode, timeout, hasTimeout := strings.Cut(*cf.mode, ":")
	switch mode {
	case "", "discard", "overwrite", "block":
		o.Mode = mode
	default:
		return usageError(fmt.Sprintf("--mode %q: want discard, overwrite or block[:TIMEOUT]", *cf.mode))
	}
	if hasTimeout {
		if mode != "block" {
			return usageError(fmt.Sprintf("--mode %q: a timeout goes with block only", *cf.mode))
		}
		if timeout == "inf" {
			o.BlockTimeout = -1
		} else if d, err := time.ParseDuration(timeout); err != nil || d <= 0 {
			return usageError(fmt.Sprintf("--mode %q: want block:DURATION (100ms, 2s) or block:inf", *cf.mode))
		} else {
			o.BlockTimeout = d
		}
	}
	return nil
}

// sessionText describes a session's channel.
func sessionText(s control.SessionInfo) string {
	t := fmt.Sprintf("%s of rings, %s mode", bytesText(s.BufferSize), s.Mode)
	if s.File != "" {
		t += ", backed by " + s.File
	}
	return t
}

// bytesText writes a size as "1 MiB", "64 KiB", or bytes.
func bytesText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// statsText writes counters as the text views show them.
func statsText(s control.Stats) string {
	return fmt.Sprintf("fired=%d matched=%d recorded=%d dropped=%d errors=%d", s.Fired, s.Matched, s.Recorded, s.Dropped, s.Errors)
}

var traceEnableCmd = traceCommand("enable", "TRACEPOINT",
	"attach a filter or a program to an application's tracepoints",
	`Trace enable attaches a filter expression (--filter, LTTng's syntax; see
'uebpf filter eval') or a program of an ELF object (--object FILE
--program NAME) to the tracepoints TRACEPOINT names (a name or a glob),
in a new session of the application or in --session ID. With --object
and no TRACEPOINT, every program in a uebpf/tracepoint/PROVIDER/NAME
section is attached to its tracepoint. The object is read here and
verified in the application. It prints the session's id, which trace
stream, record and disable take; the session records until it is
disabled or the application exits.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		filter := fs.String("filter", "", "the filter `expression`")
		object := fs.String("object", "", "an ELF object `file` holding the programs to attach")
		program := fs.String("program", "", "the `name` of the object's program to attach")
		ctxFields := fs.String("context", "", "context `fields` to fill for programs: timestamp,vtid,goid")
		ch := newChannelFlags(fs)
		session := fs.Uint64("session", 0, "add to the session with this `id` instead of a new one")
		return func(c *control.Client, pos []string, st streams) error {
			if len(pos) > 1 {
				return usageError("want one TRACEPOINT")
			}
			o := control.EnableOptions{
				Tracepoint: strings.Join(pos, ""), Filter: *filter, Program: *program, Session: *session,
			}
			if err := ch.apply(&o); err != nil {
				return err
			}
			if *ctxFields != "" {
				o.Context = strings.Split(*ctxFields, ",")
			}
			switch {
			case *filter != "" && *object != "":
				return usageError("--filter and --object exclude each other")
			case *filter == "" && *object == "":
				return usageError("say what to attach: --filter EXPR or --object FILE")
			case *filter != "" && o.Tracepoint == "":
				return usageError("a filter needs a TRACEPOINT")
			case *object != "":
				b, err := os.ReadFile(*object)
				if err != nil {
					return err
				}
				o.Object = b
			}
			s, err := c.Enable(o)
			if err != nil {
				return err
			}
			if t.jsonMode {
				return printJSON(st.stdout, s)
			}
			fmt.Fprintf(st.stdout, "session %d: %s\n", s.ID, sessionText(s))
			for _, a := range s.Attachments {
				fmt.Fprintf(st.stdout, "session %d: attachment %d: %s\n", s.ID, a.ID, a.Description)
			}
			return nil
		}
	})

var traceDisableCmd = traceCommand("disable", "[SESSION]", "close a session or an attachment of an application",
	`Trace disable closes session SESSION (its attachments stop and its
records are dropped), one attachment (--attachment ID), or every session
(--all), and prints what it closed.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		att := fs.Uint64("attachment", 0, "close only the attachment with this `id`")
		all := fs.Bool("all", false, "close every session")
		return func(c *control.Client, pos []string, st streams) error {
			var ids []uint64
			switch {
			case *att != 0 && (len(pos) > 0 || *all):
				return usageError("--attachment excludes SESSION and --all")
			case *att != 0:
				a, err := c.DisableAttachment(*att)
				if err != nil {
					return err
				}
				fmt.Fprintf(st.stdout, "disabled attachment %d: %s\n", a.ID, a.Description)
				return nil
			case *all && len(pos) == 0:
				_, sessions, err := c.Stats("")
				if err != nil {
					return err
				}
				for _, s := range sessions {
					ids = append(ids, s.ID)
				}
				if len(ids) == 0 {
					fmt.Fprintln(st.stdout, "no session to disable")
				}
			case len(pos) != 1 || *all:
				return usageError("want one SESSION, --attachment ID or --all")
			default:
				id, err := strconv.ParseUint(pos[0], 10, 64)
				if err != nil {
					return usageError(fmt.Sprintf("session %q: want a session id", pos[0]))
				}
				ids = append(ids, id)
			}
			for _, id := range ids {
				atts, err := c.Disable(id)
				if err != nil {
					return err
				}
				fmt.Fprintf(st.stdout, "disabled session %d (%d attachments)\n", id, len(atts))
				for _, a := range atts {
					fmt.Fprintf(st.stdout, "  attachment %d: %s\n", a.ID, a.Description)
				}
			}
			return nil
		}
	})

var traceStatsCmd = traceCommand("stats", "[PATTERN]", "show the counters of an application's tracepoints and sessions",
	`Trace stats prints the counters (fired, matched, recorded, dropped, errors)
of the tracepoints matching PATTERN (all without one) and of every
session with its attachments.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		return func(c *control.Client, pos []string, st streams) error {
			if len(pos) > 1 {
				return usageError("want at most one PATTERN")
			}
			tps, sessions, err := c.Stats(strings.Join(pos, ""))
			if err != nil {
				return err
			}
			if t.jsonMode {
				return printJSON(st.stdout, struct {
					Tracepoints []control.TracepointInfo `json:"tracepoints"`
					Sessions    []control.SessionInfo    `json:"sessions"`
				}{tps, sessions})
			}
			tw := tabwriter.NewWriter(st.stdout, 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "\tFIRED\tMATCHED\tRECORDED\tDROPPED\tERRORS")
			row := func(name string, s control.Stats) {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", name, s.Fired, s.Matched, s.Recorded, s.Dropped, s.Errors)
			}
			for _, tp := range tps {
				row(tp.Name, tp.Stats)
			}
			for _, s := range sessions {
				row(fmt.Sprintf("session %d", s.ID), s.Stats)
				for _, a := range s.Attachments {
					row(fmt.Sprintf("  attachment %d %s", a.ID, a.Tracepoint), a.Stats)
				}
			}
			return tw.Flush()
		}
	})

var traceStreamCmd = traceCommand("stream", "", "print the events an application's sessions record",
	`Trace stream prints the events recorded by session --session ID, or by
every session of the application (each line then says its session), as
they come: one line per event like 'lttng view' (wall time, time since
the previous event, tracepoint, context, fields), or one JSON object per
line with --json ("ts" is the same wall time, in ns since the epoch; the
context fields the session did not collect are absent). It holds the
sessions' channels (their consumer) until it stops: at --count events,
after --duration or at Ctrl-C (within a tenth of a second, however fast
events come and however slowly the output takes them), or when the
sessions are disabled or the application exits (after printing every
event it had committed). Then it prints to standard error how many
events it printed and how many the sessions dropped (their rings full
because the stream fell behind). The sessions keep recording after it
stops.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		session := fs.Uint64("session", 0, "stream only the session with this `id`")
		count := fs.Int("count", 0, "stop after `n` events")
		duration := fs.Duration("duration", 0, "stop after this `time`")
		return func(c *control.Client, pos []string, st streams) error {
			switch {
			case len(pos) > 0:
				return usageError("trace stream takes no arguments; --session ID picks a session")
			case *count < 0 || *duration < 0:
				return usageError("--count and --duration want positive values")
			}
			ids := []uint64{*session}
			if *session == 0 {
				_, sessions, err := c.Stats("")
				if err != nil {
					return err
				}
				if len(sessions) == 0 {
					return badArgument{errors.New("the application has no session: enable a tracepoint first (uebpf trace enable)")}
				}
				ids = ids[:0]
				for _, s := range sessions {
					ids = append(ids, s.ID)
				}
			}
			ctx, stop := interrupted(*duration)
			defer stop()
			return streamSessions(ctx, c, ids, *count, t.jsonMode, st)
		}
	})

// streamSessions prints the events of sessions until ctx is done, count
// events were printed (if count > 0), or every channel ended.
func streamSessions(ctx context.Context, c *control.Client, ids []uint64, count int, jsonMode bool, st streams) error {
	var chans []*control.Channel
	defer func() {
		for _, ch := range chans {
			ch.Close()
		}
	}()
	out := control.NewLines(st.stdout, jsonMode, len(ids) > 1)
	for _, id := range ids {
		ch, err := c.Channel(id)
		if err != nil {
			return err
		}
		chans = append(chans, ch)
		out.Add(ch, id)
	}
	max := 4096
	var (
		stopped time.Time
		pause   = 50 * time.Microsecond
		err     error
	)
	for err == nil {
		if count > 0 {
			max = min(4096, int(uint64(count)-out.Read()))
		}
		roundCtx, cancel := ctx, context.CancelFunc(func() {})
		if !stopped.IsZero() {
			roundCtx, cancel = context.WithDeadline(context.Background(), stopped.Add(ctf.StopBudget))
		}
		var n int
		n, err = out.Round(roundCtx, max)
		cancel()
		if err != nil && ctx.Err() != nil {
			err = nil // the stop came while the output was taking a round
		}
		if stopped.IsZero() && ctx.Err() != nil {
			stopped = time.Now()
		}
		if count > 0 && out.Read() >= uint64(count) || !stopped.IsZero() && time.Since(stopped) >= ctf.StopBudget {
			break
		}
		if n > 0 {
			pause = 50 * time.Microsecond
			continue
		}
		if ended(c, chans) || !stopped.IsZero() && !pending(chans) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Millisecond)
	}
	closeCtx, cancel := context.WithDeadline(context.Background(), stopDeadline(stopped))
	defer cancel()
	cerr := out.Close(closeCtx)
	var dropped uint64
	for _, ch := range chans {
		dropped += ch.Stats().Dropped
	}
	slow := ""
	if n := out.Read() - out.Written(); n > 0 {
		slow = fmt.Sprintf(" (%d more not printed: the output was too slow to take them before the stop)", n)
	}
	fmt.Fprintf(st.stderr, "%d events%s, %d dropped by the sessions%s\n", out.Written(), slow, dropped, endText(c, chans))
	if err == nil {
		err = cerr
	}
	return err
}

// pending reports records not read yet in some channel.
func pending(chans []*control.Channel) bool {
	for _, ch := range chans {
		if ch.Pending() {
			return true
		}
	}
	return false
}

// stopDeadline is when a stop that began at stopped must be over: the
// output may take what is left until then (no bound before a stop).
func stopDeadline(stopped time.Time) time.Time {
	if stopped.IsZero() {
		return time.Now().Add(24 * time.Hour)
	}
	return stopped.Add(ctf.StopBudget)
}

// ended reports channels that will get nothing more: every session
// disabled, or the application gone, and everything read.
func ended(c *control.Client, chans []*control.Channel) bool {
	gone := false
	select {
	case <-c.Done():
		gone = true
	default:
	}
	for _, ch := range chans {
		if ch.Pending() || !gone && !ch.Closed() {
			return false
		}
	}
	return true
}

// endText says why the channels ended, for the summary.
func endText(c *control.Client, chans []*control.Channel) string {
	select {
	case <-c.Done():
		return "; the application exited"
	default:
	}
	for _, ch := range chans {
		if !ch.Closed() {
			return ""
		}
	}
	return "; the sessions were disabled"
}

var traceRecordCmd = traceCommand("record", "[TRACEPOINT]", "write an application's events into a CTF trace (LTTng's format)",
	`Trace record writes the events of session --session ID into a CTF 1.8
trace in --output DIR (one stream file per ring of the session), which
babeltrace2 prints and Trace Compass opens. With TRACEPOINT and --filter
instead of --session, it enables them in a new session first and
disables it at the end. It records until --duration or Ctrl-C (then it
writes what the session committed until then, for a tenth of a second at
most), until the session is disabled, or until the application exits or
dies: then it writes every event the application committed, says so, and
exits 0. With --rotate-size or --rotate-time it writes a sequence of
complete traces, DIR/chunk-000000, chunk-000001, ..., each readable once
the next begins. DIR must be new, or empty and the caller's: a directory
others may write (as /tmp) is refused.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		session := fs.Uint64("session", 0, "record the session with this `id`")
		filter := fs.String("filter", "", "enable TRACEPOINT with this filter `expression` in a new session")
		output := fs.String("output", "", "the trace's `directory` (created; the caller's own, not writable by others)")
		duration := fs.Duration("duration", 0, "stop after this `time`")
		rotSize := fs.Int64("rotate-size", 0, "start a new trace when the current one holds this many `bytes`")
		rotTime := fs.Duration("rotate-time", 0, "start a new trace when the current one is this `old`")
		ch := newChannelFlags(fs)
		return func(c *control.Client, pos []string, st streams) error {
			switch {
			case *output == "":
				return usageError("--output DIR is needed")
			case len(pos) > 1:
				return usageError("want at most one TRACEPOINT")
			case (len(pos) == 1) != (*filter != ""):
				return usageError("TRACEPOINT and --filter go together")
			case (len(pos) == 1) == (*session != 0):
				return usageError("say what to record: --session ID, or TRACEPOINT --filter EXPR")
			case *rotSize < 0 || *rotTime < 0 || *duration < 0:
				return usageError("--rotate-size, --rotate-time and --duration want positive values")
			}
			id := *session
			if id == 0 {
				o := control.EnableOptions{Tracepoint: pos[0], Filter: *filter}
				if err := ch.apply(&o); err != nil {
					return err
				}
				s, err := c.Enable(o)
				if err != nil {
					return err
				}
				id = s.ID
				defer c.Disable(id)
				fmt.Fprintf(st.stderr, "recording session %d (%s) into %s\n", id, sessionText(s), *output)
			}
			var opts []ctf.Option
			if *rotSize > 0 || *rotTime > 0 {
				opts = append(opts, ctf.Rotate(*rotSize, *rotTime))
			}
			ctx, stop := interrupted(*duration)
			defer stop()
			rs, err := c.Record(ctx, id, *output, opts...)
			fmt.Fprintln(st.stderr, recordText(rs, *output, c))
			return err
		}
	})

// recordText is the one-line summary of a recording.
func recordText(rs ctf.RecordStats, dir string, c *control.Client) string {
	t := fmt.Sprintf("%d events written to %s", rs.Events, dir)
	if rs.Chunks > 1 {
		t += fmt.Sprintf(" in %d traces", rs.Chunks)
	}
	t += fmt.Sprintf("; %d dropped by the session", rs.Dropped)
	if rs.Overwritten > 0 {
		t += fmt.Sprintf(", %d overwritten", rs.Overwritten)
	}
	if rs.Bad > 0 || rs.Skipped > 0 {
		t += fmt.Sprintf("; %d records that did not hold and %d bytes skipped", rs.Bad, rs.Skipped)
	}
	if c != nil {
		select {
		case <-c.Done():
			t += "; the application exited"
		default:
		}
	}
	return t
}

var traceSnapshotCmd = traceCommand("snapshot", "", "write what a session's rings hold now into a CTF trace",
	`Trace snapshot writes what the rings of session --session ID hold at
this moment into a CTF trace in --output DIR, as 'lttng snapshot record'
does: for a session in overwrite mode (trace enable --mode overwrite, a
flight recorder), its newest events. It takes nothing from the session's
consumer, and the session goes on recording.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		session := fs.Uint64("session", 0, "the session's `id`")
		output := fs.String("output", "", "the trace's `directory` (created; the caller's own, not writable by others)")
		return func(c *control.Client, pos []string, st streams) error {
			switch {
			case len(pos) > 0:
				return usageError("trace snapshot takes no arguments")
			case *session == 0 || *output == "":
				return usageError("want --session ID and --output DIR")
			}
			rs, err := c.SnapshotTrace(*session, *output)
			fmt.Fprintln(st.stderr, recordText(rs, *output, nil))
			return err
		}
	})

var traceRecoverCmd = &command{
	name:    "trace recover",
	args:    "FILE",
	summary: "turn what a crashed application's file-backed session committed into a CTF trace",
	detail: `Trace recover reads FILE, the file of a file-backed session (trace enable
--file-backed) whose application died, and writes every record the
application committed to it into a CTF trace in --output DIR, as
lttng-crash does. Records torn by the crash are skipped and counted,
never decoded. The file is only read.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		output := fs.String("output", "", "the trace's `directory` (created; the caller's own, not writable by others)")
		return func(pos []string, st streams) error {
			switch {
			case len(pos) != 1:
				return usageError("want one FILE")
			case *output == "":
				return usageError("--output DIR is needed")
			}
			b, err := os.ReadFile(pos[0])
			if err != nil {
				return err
			}
			r, err := tracepoint.ParseChannel(b)
			if err != nil {
				return badArgument{fmt.Errorf("%s: %w", pos[0], err)}
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(ctf.ErrGone) // all of it
			rs, err := ctf.RecordChannel(ctx, r, *output)
			fmt.Fprintln(st.stderr, recordText(rs, *output, nil))
			return err
		}
	},
}

var tracePsCmd = &command{
	name:    "trace ps",
	summary: "list the processes with a control socket you may open",
	detail: `Trace ps lists the processes that serve a control socket (control.Listen)
the caller may open and trusts: pid, name, the uid the process runs as,
and socket path. A socket is listed only from a directory of the
caller's or root's that no one else may write (for root, also each
user's /run/user/UID/uebpf), and only if the process answering on it is
the pid its name says, running as the caller, root or that user. With
--ssh or --remote, those of another machine (or container).`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		t := &target{}
		fs.StringVar(&t.ssh, "ssh", "", "list those on `[user@]host` (through ssh, which runs \"uebpf trace ps\" there)")
		fs.StringVar(&t.sshBin, "ssh-uebpf", "uebpf", "the uebpf `command` on the ssh host")
		fs.StringVar(&t.remote, "remote", "", "list those `command` (split at spaces) lists when run with \"trace ps\" appended")
		return func(pos []string, st streams) error {
			if len(pos) > 0 {
				return usageError("trace ps takes no arguments")
			}
			via, err := t.transport()
			if err != nil {
				return err
			}
			if via != nil {
				cmd := exec.Command(via[0], append(via[1:], "trace", "ps")...)
				cmd.Stdout, cmd.Stderr = st.stdout, st.stderr
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("trace ps through %s: %w%s", strings.Join(cmd.Args, " "), err, notFoundHint(cmd))
				}
				return nil
			}
			socks, err := control.Sockets()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(st.stdout, 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "PID\tNAME\tUID\tSOCKET")
			for _, s := range socks {
				name, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", s.PID))
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", s.PID, strings.TrimSpace(string(name)), s.UID, s.Path)
			}
			return tw.Flush()
		}
	},
}

// traceStdioCmd is the far end of --ssh: "uebpf trace --stdio --pid PID"
// carries one control connection over its standard input and output.
var traceStdioCmd = &command{
	name:    "trace stdio",
	summary: "carry a control connection over standard input and output (what --ssh runs)",
	detail: `Trace stdio, also spelled 'uebpf trace --stdio', connects to the control
socket of --pid PID or --socket PATH and carries one connection over its
standard input and output, until either side closes: it is what the
trace commands run on the remote machine for --ssh. The socket's checks
apply to the user it runs as, and it checks the server as the other
trace commands do (with --pid, the server must be that process) before
it passes on a byte.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		t := &target{}
		fs.IntVar(&t.pid, "pid", 0, "the application's `pid`")
		fs.StringVar(&t.socket, "socket", "", "the application's control socket `path`")
		return func(pos []string, st streams) error {
			if len(pos) > 0 {
				return usageError("trace --stdio takes no arguments")
			}
			if _, err := t.where(); err != nil {
				return err
			}
			s, err := socketOf(t.pid, t.socket)
			if err != nil {
				return err
			}
			ctx, stop := interrupted(0)
			defer stop()
			return control.ServeStdio(ctx, s, st.stdin, st.stdout)
		}
	},
}

var traceMapCmd = traceCommand("map", "MAP [KEY [VALUE]]", "read and write the maps of a session's programs",
	`Trace map reads and writes map MAP of the objects enabled into session
--session ID (trace enable --object): with no KEY it prints every entry
(up to --max), with KEY the value under it, with KEY and VALUE it stores
VALUE under KEY, and with --delete it removes KEY. Keys and values are
hex bytes as the map holds them (little-endian numbers: a u32 7 is
07000000); the output is "KEY VALUE" lines, or JSON with --json. This is
how a tool changes a threshold a running filter reads.`,
	func(fs *flag.FlagSet, t *target) func(*control.Client, []string, streams) error {
		session := fs.Uint64("session", 0, "the session whose objects hold the map (its `id`)")
		del := fs.Bool("delete", false, "remove KEY")
		flags := fs.String("flags", "any", "for an update: `any`, noexist (only a new key) or exist (only an existing one)")
		maxEntries := fs.Int("max", 0, "print at most `n` entries (0: the application's limit)")
		return func(c *control.Client, pos []string, st streams) error {
			if *session == 0 || len(pos) == 0 || len(pos) > 3 || (*del && len(pos) != 2) {
				return usageError("want --session ID MAP [KEY [VALUE]], or --delete with MAP KEY")
			}
			updateFlags, ok := map[string]uint64{"any": 0, "noexist": 1, "exist": 2}[*flags]
			if !ok {
				return usageError(fmt.Sprintf("--flags %q: want any, noexist or exist", *flags))
			}
			hexArg := func(what, s string) ([]byte, error) {
				b, err := parseHex(s)
				if err != nil || len(b) == 0 {
					return nil, badArgument{fmt.Errorf("%s %q: want hex bytes", what, s)}
				}
				return b, nil
			}
			name := pos[0]
			if len(pos) == 1 {
				entries, all, err := c.MapIterate(*session, name, *maxEntries)
				if err != nil {
					return err
				}
				for _, e := range entries {
					if t.jsonMode {
						if err := printJSON(st.stdout, e); err != nil {
							return err
						}
						continue
					}
					fmt.Fprintf(st.stdout, "%x %x\n", []byte(e.Key), []byte(e.Value))
				}
				if !all {
					fmt.Fprintf(st.stderr, "%d entries shown; the map holds more (--max)\n", len(entries))
				}
				return nil
			}
			key, err := hexArg("key", pos[1])
			if err != nil {
				return err
			}
			switch {
			case *del:
				return c.MapDelete(*session, name, key)
			case len(pos) == 3:
				value, err := hexArg("value", pos[2])
				if err != nil {
					return err
				}
				return c.MapUpdate(*session, name, key, value, updateFlags)
			}
			value, err := c.MapLookup(*session, name, key)
			if err != nil {
				return err
			}
			if t.jsonMode {
				return printJSON(st.stdout, control.Entry{Key: key, Value: value})
			}
			_, err = fmt.Fprintf(st.stdout, "%x %x\n", key, value)
			return err
		}
	})
