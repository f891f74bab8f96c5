// Package tracepoint lets a Go application declare userspace tracepoints
// with a typed payload, and attach eBPF programs to them at run time: filter
// expressions (package filter), programs compiled from C by clang (a
// *uebpf.Program) or any *vm.Program.
//
// # Declaring and firing
//
// A tracepoint is a provider:name pair and a payload struct with a fixed,
// C-compatible layout: integers of explicit width, float32/64, bool and
// [N]byte arrays (strings, read as NUL-terminated):
//
//	type RequestDone struct {
//		Method     [8]byte
//		Status     uint16
//		_          [6]byte
//		DurationUs uint64
//	}
//	var reqDone = tracepoint.New[RequestDone]("http", "request_done")
//
//	reqDone.Fire(&ev)
//
// New checks the payload type with reflect once and panics on a type it
// cannot describe to C (a programming error found at init); Declare returns
// the error instead. Both register the tracepoint in a process-wide
// registry (List, Lookup).
//
// Fire takes a pointer: with nothing attached it is one atomic load and a
// branch, inlined at the call site, with no allocation. Passing the payload
// by value costs a copy of the struct at every call site even when nothing
// is attached (BenchmarkFireDisabled measures both); the pointer does not
// escape: programs that only read the payload (filters over its fields, run
// by the JIT) read it in place during the call, others get a copy, and
// sessions copy it into their ring.
//
// # Records
//
// An attached program gets r1 = a record: the payload's bytes, then at the
// payload size rounded up to 8 a context block (Context):
//
//	struct { u64 timestamp_ns; s64 vtid; s64 vpid; u64 goid; char procname[16]; }
//
// vpid and procname are read once per process. timestamp_ns (CLOCK_MONOTONIC,
// the clock of bpf_ktime_get_ns) is filled when an attachment uses it and
// always in recorded events (WithTimestamp for a program that reads it,
// because reading the clock can cost more than the filter). vtid is the OS thread id: a system call, so it
// is filled only when an attachment asks for it (a filter that reads
// $ctx.vtid, or WithThreadID for a program). goid, the goroutine id, is
// read from the runtime's goroutine struct on amd64 and arm64 (a few ns;
// see goid.go) and from the goroutine's stack trace elsewhere (several
// microseconds); it too is filled only on request (WithGoroutineID, or a
// filter reading $ctx.goid); otherwise it is 0.
//
// # Attaching and recording
//
// Attach runs a program on every firing; Session.Enable also records the
// events it keeps into the session's channel. A program returns non-zero
// to keep (record) the event and 0 to drop it.
//
// A session's channel is rings in shared memory, one per P (a sealed
// memfd, or a file that outlives a crash: SessionOptions.File), written
// without a locked instruction by a goroutine pinned to its P. Go code in
// the process reads it with Session.Next or Session.Reader; a consumer in
// another process maps its files (Session.Files, MapChannel), as package
// control hands them over. SessionOptions.Mode says what an event that
// finds its ring full does: Discard drops it (counted), Overwrite drops
// the oldest (a flight recorder), Block waits for the consumer up to a
// timeout. An event that several attachments of one session keep is
// recorded once. A record holds the timestamp, the context fields that
// were collected (Collected says which) and the payload; the process's
// pid and name are in the channel's header; the layouts of the
// tracepoints recorded are in the channel too, so a reader needs nothing
// else to decode it (ChannelReader, Event, ReadField: the record codec,
// the one place records are decoded). Attachments are a copy-on-write list behind an atomic pointer:
// attaching and closing never block firing goroutines. Every attachment
// returns a Link; Close is idempotent, and a Fire that starts after Close
// returns never runs the program. Memory of a closed filter's native code is
// released by the garbage collector once no Fire in flight can still run it.
//
// Each attachment counts what its program did (Attachment.Stats); the
// figures of a tracepoint and of a session are sums over their
// attachments, closed ones included, so that a recorded event is counted
// once rather than three times (each an atomic add, which costs more than
// the rest of the bookkeeping). A recorded event's counts are plain adds
// in the ring's own memory.
//
// # C programs
//
// Header writes a C header for tracepoints (WriteHeader for registered ones,
// for go:generate; "uebpf tracepoint header" for a spec on the command
// line). A program in section "uebpf/tracepoint/<provider>/<name>" is
// attached by AttachCollection.
package tracepoint
