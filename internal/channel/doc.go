// Package channel is the shared memory that a tracing session's records
// go through: rings, one per P of the producing process and one shared by
// the rest, in a memfd (or a file, for crash recovery) that a consumer in
// another process maps, as the kernel's BPF ring buffer is mapped: the
// data read-only, its own consumer positions writable.
//
// # Layout
//
// A channel is two files. The data file holds a header, a metadata area
// (bytes the producer appends, which package tracepoint uses for the
// layouts of the tracepoints it records) and the shards' data; only the
// producer writes it. The positions file holds each shard's consumer
// position, on a cache line of its own; only the consumer writes it.
// Every number is little-endian (the machine's byte order: producer and
// consumer are on one machine).
//
//	data file
//	  0    magic "uebpfch1", version u32, mode u32, shards u32, flags u32
//	  24   shard size u64, meta offset u64, meta capacity u64, data offset u64, size u64
//	  64   pid i64, clock offset i64 (CLOCK_REALTIME - CLOCK_MONOTONIC), created u64
//	  88   state u32 (0 live, 1 closed), meta length u64 at 96, procname [16] at 104
//	  128  per shard, 64 bytes: offset u64, size u64, head u64, tail u64,
//	       records u64, dropped u64, overwritten u64
//	  meta offset: meta capacity bytes; data offset: the shards
//	positions file
//	  64 × shard: consumer position u64
//
// Positions count bytes since the channel began; a shard's ring is a power
// of two, and a position's offset in it is the position modulo its size.
// A record is 8-byte aligned: a u32 length (of the header and the body,
// before padding to 8), a u32 tag that the producer's user gives
// (tracepoint: the tracepoint's index in the metadata and the context
// fields present), then the body. A record never wraps: where one would
// run past the end of the ring, the producer first writes a pad record
// (length with bit 31 set) to the end. Records between a shard's tail and
// head are complete: the producer writes a record, then publishes the
// head past it (a release store), and in overwrite mode moves the tail
// past the records it is about to overwrite before it writes over them.
//
// # Modes
//
// Discard: a record that finds no room is dropped and counted. Overwrite
// (flight recorder): the oldest records make room. Block: the producer
// waits for the consumer, up to a timeout, then drops.
//
// # Trust
//
// Neither side trusts the other. The producer keeps its own state in its
// own memory and reads only the consumer positions from shared memory,
// ignoring any that are not 8-aligned, move backwards or pass the head:
// nothing a consumer writes makes it overwrite what the consumer has not
// consumed or write outside a ring. The consumer (often root, reading an
// application of another user) checks the header against the file's size
// once, reads each length and tag once, bounds every record by the ring,
// the head and the shard, copies before it decodes where the producer may
// overwrite (overwrite mode), and reads the mapping with faults turned
// into errors (a file truncated under it), so that no content of the
// files makes it crash, read outside them or loop without end.
//
// Producers write lock-free: a writer is pinned to its P (it cannot be
// preempted or rescheduled until it commits), so each P's ring has one
// writer at a time, and a record costs no locked instruction. Writers on
// a P the channel has no ring for (GOMAXPROCS raised since) share the
// last ring under a spin lock.
package channel
