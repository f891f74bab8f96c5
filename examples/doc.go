// Package examples holds small BPF C programs that run in uebpf, each in its
// own folder with its committed object (regenerate with go generate; clang-19
// needed) and a Go example that loads and runs it:
//
//   - filter: counts slow system calls per process in a hash map;
//   - ringbuf: sends records of failed requests to Go through a ring buffer;
//   - tailcall: a dispatcher that tail-calls one handler per operation;
//   - latency-tracker: a real tool (needs root) whose one object holds
//     kernel programs on sys_enter/sys_exit and userspace programs that
//     adapt per-syscall thresholds over the same maps; see its README;
//   - http-service: a Go HTTP service instrumented with tracepoints, whose
//     --demo attaches an LTTng filter expression at run time.
//
// The demo (go run ./examples/demo) runs the filter on every engine.
//
// include/uebpf_helpers.h declares the section and map macros and the
// standard helpers; it needs only the kernel's uapi headers
// (linux-libc-dev), not libbpf.
package examples
