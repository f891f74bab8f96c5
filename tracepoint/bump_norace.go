//go:build !race

package tracepoint

// bump adds one to a counter that only one writer at a time changes (a
// ring's pinned writer) and others load atomically: a plain add, where a
// locked one would cost most of a record.
func bump(p *uint64) { *p++ }
