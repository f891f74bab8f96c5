package tracepoint

import "golang.org/x/sys/unix"

// gettid is the calling OS thread's id: a system call.
func gettid() int { return unix.Gettid() }
