// Package recordbench holds the recorder's end-to-end tests and its
// benchmark against LTTng (BENCHMARKS.md): floodapp, an application that
// fires a tracepoint as fast as its goroutines can, and the uebpf
// command recording it, each a process of its own as a user runs them.
// The tracepoint's payload and filter are those of scripts/lttng-compare,
// so that the kept rates compare.
package recordbench
