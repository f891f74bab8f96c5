// Package workload builds the C programs the tracker's tests and
// benchmarks run: a fork storm that wraps the thread-id space, children
// that reuse an exited child's id (clone3 with set_tid), and a getppid
// loop. They are C so that the process makes exactly the system calls it
// times, with no runtime threads of its own.
package workload
