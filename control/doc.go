// Package control lets tools outside a Go application drive its
// tracepoints (package tracepoint) while it runs, as lttng-sessiond lets
// "lttng enable-event" drive an LTTng-instrumented one: list the
// tracepoints, enable them with a filter expression or an eBPF program,
// read the events they record, read counters and maps, and disable them,
// without a restart.
//
// An application opts in with one call:
//
//	srv, err := control.Listen(ctx, nil)
//
// which serves a unix socket named by the process's pid: /run/uebpf/<pid>.sock
// for root, $XDG_RUNTIME_DIR/uebpf/<pid>.sock otherwise (Options.Path
// overrides it). Tools find sockets with Sockets and connect with
// DialPID or Dial; ServeStdio carries one connection over stdin and
// stdout, for a tool on another machine that reaches the application
// through ssh.
//
// # Access
//
// Both ends check the other's credentials with SO_PEERCRED, the uid and
// pid the kernel recorded for the other end of the socket.
//
// The server: the socket has mode 0600 in a directory of mode 0700, and
// every connection is checked again: only the application's own uid and
// root may connect. Anyone else gets an error frame (code "denied") and
// is disconnected, and the refusal is logged to Options.Logger. Enabling
// a program over the socket runs code in the application, verified as
// every uebpf program is, so access is the application's own user's.
//
// The client: a tool often runs as root, and anyone can create a socket
// file where they may write, so a client speaks only to a server it
// trusts, checked before it sends a byte. Dial accepts a server running
// as the caller's uid or root's; DialPID(pid) also requires the server to
// be process pid; Socket.Dial takes the pid and one more trusted uid
// explicitly. A server refused is an error wrapping ErrUntrusted that
// names the path, the server's pid and uid, and what was expected.
// Sockets lists a socket only from a directory of the caller's or root's
// that others cannot write (uebpf-<uid> in the temporary directory: the
// caller's, mode 0700), only when its file belongs to a trusted uid, and
// only when the process answering is the pid its name says. Root also
// searches /run/user/<uid>/uebpf of each user whose /run/user/<uid> is
// theirs, trusting that uid for the sockets there: root may control any
// user's application.
//
// Listen at the default path replaces a socket file left there by a dead
// process that had the same pid, and refuses one that a live process
// answers on, naming it. Listen needs Linux; elsewhere it returns an
// error wrapping ErrUnsupported, as Dial and Sockets do.
//
// # Limits
//
// A client cannot exhaust the server: connections are bounded in all
// (Options.MaxConns) and per peer uid (Options.MaxConnsPerUID), so one
// user's clients leave room for the others; a frame's memory grows with
// the bytes that arrive, not with the length it claims; a frame must
// arrive within Options.FrameTimeout of its first byte (the hello within
// it of connecting); and a connection that sends no request for
// Options.IdleTimeout, holding no channel, is closed. A session's rings
// are bounded (Options.MaxBufferSize), and so are the rings of all
// sessions together (Options.MaxRingMemory) and the attachments of a
// session (Options.MaxAttachments). Every refusal
// and every connection closed for a limit gets an error frame with code
// "limit" that names the limit and the option that raises it, and is
// logged.
//
// # Protocol (version 1)
//
// A connection carries frames both ways: a u32 little-endian length, then
// that many bytes of a JSON object. A frame over MaxFrameSize (16 MiB) is
// refused before anything is allocated for it, and the connection closed.
// The client speaks first:
//
//	→ {"id":1,"op":"hello","version":1}
//	← {"id":1,"version":1,"pid":1234,"process":"httpd"}
//
// A server that does not speak the client's version answers with code
// "version" and the version it speaks, and hangs up. Then each request
// (Request) names an op and carries an id that its response (Response)
// echoes; requests may be pipelined. A failed request gets "error" (the
// message: a filter's compile error, the verifier's refusal, intact) and
// "code" (bad_request, not_found, refused, busy, limit, version, denied,
// internal), and the connection goes on.
//
//	list      {tracepoint: name or glob}       → tracepoints: name, sizes, fields (name, type as u16,
//	                                             s64, f32, bool, string[16]..., offset), counters
//	enable    {tracepoint, filter}             → sessions: [the session, with its attachments]
//	          {tracepoint, object, program}      (object: the ELF file, base64; loaded with uebpf.Load,
//	          {object}                            verified for the tracepoint's record; without a
//	          + context, session,                 program, every uebpf/tracepoint/<p>/<n> section);
//	          buffer_size, mode,                  a new session's rings: their size, mode (discard,
//	          block_timeout_ns, file_backed       overwrite, block) and file
//	disable   {session} or {attachment}        → {disabled: the attachments closed}
//	channel   {session}                        → {channel: shards, buffer_size, mode} with the channel's
//	                                             two files (SCM_RIGHTS): the connection is its consumer
//	snapshot  {session}                        → {channel} with the data file alone, to read beside it
//	release   {session}                        → {} (the channel is given back)
//	stats     {tracepoint}                     → tracepoints' and sessions' counters
//	map_lookup, map_update, map_delete         {session, map, key, value, flags} (hex bytes) → {value}
//	map_iterate                                {session, map, max} → {entries, end: all of them}
//
// # Sessions and channels
//
// A session is a tracepoint.Session owned by the server: it records until
// it is disabled or the server closes, whatever happens to the connection
// that enabled it, so that a tool may enable, disconnect, and read later
// from another connection. Any client may see and use any session. A
// session's records go into its channel (package tracepoint: one ring
// per P, in shared memory), never through the socket: a consumer asks
// for the channel, gets its files with the reply, maps them (Channel,
// through tracepoint.MapChannel: the data read-only, its consumer
// positions writable) and reads the records itself. One connection at a
// time holds a session's channel; the next starts after what it read.
// Events the rings have no room for are dropped at the firing, in
// discard mode, never blocking the application, and counted exactly
// (matched = recorded + dropped); overwrite mode keeps the newest (a
// snapshot writes them out), block mode makes the firing goroutine wait
// for the consumer up to a timeout. An event several attachments of a
// session keep is recorded once. Objects enabled into a session belong to
// it: their maps are what the map operations read and write, and they are
// closed with it. The application's exit or death leaves a consumer's
// mapping whole: the consumer reads what was committed, then ends.
//
// A pipe (ssh, "uebpf trace --stdio") carries no descriptors: ServeStdio,
// at the application's end, maps the channels the server hands over and
// relays their records in binary frames (a length word with bit 31 set),
// a whole round of every ring at a time, with JSON frames of counters and
// the end; the client reads them through the same Channel.
//
// Decoded, an event is (Event, "uebpf trace stream --json")
//
//	{"session":1,"tp":"http:request_done","ts":1733620000123456789,"vpid":1234,"procname":"httpd",
//	 "vtid":77,"fields":{"method":"GET","status":503,"duration_us":25000}}
//
// with "ts" the wall time in ns since the epoch (the application's
// clock), the context fields the session did not collect absent, and the
// payload's fields in declaration order, each decoded by its kind:
// integers as JSON numbers (exact to 64 bits), floats as numbers or
// "NaN", "+Inf", "-Inf", booleans, and strings up to their NUL.
//
// # Export
//
// Client.Record writes a session of another process into a CTF trace
// (package tracepoint/ctf, which babeltrace2 and Trace Compass read),
// payloads copied as the application wrote them, until stopped, the
// session is disabled or the application is gone; Client.SnapshotTrace
// writes what a session's rings hold now; Lines prints channels as text
// or JSON lines; WriteJSON writes a session of this process as JSON
// lines. The uebpf command's "trace" subcommands are a client of this
// package.
//
// Nothing a client sends can make the server panic or leak: requests are
// checked and bounded (sessions, buffer sizes, ring memory, attachments,
// connections, frame sizes and times, map iterations), and a connection's
// channels are given back when it ends. Nothing the server hands over is
// trusted either: a channel's reader bounds every length and position it
// reads (see tracepoint.ChannelReader).
package control
