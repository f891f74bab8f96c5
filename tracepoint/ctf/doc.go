// Package ctf writes tracepoint records as a CTF 1.8 trace (Common Trace
// Format, the format of LTTng), so that the tools LTTng users already run
// read what a uebpf session recorded: babeltrace2 prints it, Trace Compass
// opens it.
//
//	stats, err := ctf.Record(ctx, session, "trace-dir")
//
// drains a session into a trace until ctx is done, one stream per ring,
// counting the events the rings dropped as discarded; RecordChannel does
// the same for any Source (another process's session, through package
// control), with Rotate for a sequence of traces. A Writer writes single
// records (Write, WriteEvent).
//
// The writer is written against the CTF 1.8 specification; it uses no
// library, and only the part of the format it needs.
//
// # Streaming
//
// The writer holds one packet in memory per stream (PacketSize, 64 KiB by
// default) and writes it to the stream file when the next event does not
// fit:
// memory stays bounded however long the trace. Full packets are written
// at their full size, padded with zeros after their content; the last
// packet (Close) and any packet written by Flush are trimmed to their
// content. Flush (and Record's FlushInterval) writes the packet being
// filled early, for readers of a trace still being written. Event classes
// are declared the first time a tracepoint's record is written: the
// metadata file is then rewritten (aside, and renamed over the old one),
// so the metadata on disk always describes every packet on disk.
//
// Events lost before they reached the writer (SetDiscarded) are counted in
// every later packet's events_discarded, as CTF wants: readers report the
// difference between two packets. Losses before the first packet get an
// empty packet in front, which lost none, so that readers know how many.
//
// # Layout
//
// A trace directory holds "metadata", the TSDL description in plain text,
// and a stream file per ring, "stream_0", "stream_1", ..., each a sequence
// of packets (readers merge them by time). Everything is in the machine's
// byte order (the metadata says which) and every number is naturally
// aligned from the packet's start, as C lays out a struct. Each payload
// field's bytes are copied as they are; the payload's padding is not
// (blank fields are not described to readers), so its fields are laid
// out anew, in order, each at its natural alignment: for a payload laid
// out as C lays it out, where they already are, so that a session's
// record becomes an event by one copy.
//
//	packet header   uint32 magic (0xC1FC1FC1), uint8 uuid[16], uint32 stream_id
//	packet context  uint64 timestamp_begin, timestamp_end (clock "monotonic"),
//	                content_size, packet_size (bits), packet_seq_num,
//	                events_discarded                      72 bytes in all
//	event header    uint32 id, uint64 timestamp (clock "monotonic")
//	event context   int64 _vtid, uint64 _goid: those the record collected
//	event payload   the tracepoint's fields, in order
//
// An event class is a tracepoint with one set of collected context
// fields: two classes of one name when some of its records carry the
// thread id and others do not.
//
// Events start 8-byte aligned. Payload fields map to CTF types by kind:
// integers of 8 to 64 bits (signed or not), floating_point with exp_dig and
// mant_dig of IEEE 754 binary32/64, bool as an enum of an 8-bit integer
// ("false" = 0, "true" = 1) and [N]byte strings as arrays of N UTF-8
// encoded bytes, which readers print as the string up to its NUL. Field
// names get a leading underscore, which readers strip: a field may then
// be named as a TSDL keyword ("string", "align").
//
// The clock is CLOCK_MONOTONIC in nanoseconds (the records' timestamps),
// with an offset from the Unix epoch of CLOCK_REALTIME - CLOCK_MONOTONIC
// measured at Create: readers print wall-clock times. A stream's events
// must be in time order, but goroutines can reach a session's ring in
// another order than they read the clock: an event older than the one
// written before it takes that one's timestamp.
//
// The trace's env says hostname, domain "ust", tracer_name "uebpf",
// procname and vpid, as LTTng-UST traces do.
package ctf
