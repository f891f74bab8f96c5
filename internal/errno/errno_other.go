//go:build !linux

package errno

import "golang.org/x/sys/unix"

// Linux returns Linux's number for e: the same error's number there, or
// EINVAL's for an error helpers never return.
func Linux(e unix.Errno) int64 {
	if e == ENOTSUPP {
		return int64(e)
	}
	if n, ok := linuxNumbers[e]; ok {
		return n
	}
	return linuxNumbers[unix.EINVAL]
}
