package errno

import "golang.org/x/sys/unix"

// Linux returns Linux's number for e, which on Linux is e.
func Linux(e unix.Errno) int64 { return int64(e) }
