// Package errno converts the host's error numbers to Linux's, which are
// part of the eBPF ABI: a helper fails with -ENOENT as Linux numbers it
// whatever the host (on macOS, EAGAIN is 35, on Linux 11), and programs
// compare with those numbers.
package errno

import "golang.org/x/sys/unix"

// linuxNumbers are the numbers Linux gives the errors helpers and maps
// return.
var linuxNumbers = map[unix.Errno]int64{
	unix.EPERM:      1,
	unix.ENOENT:     2,
	unix.E2BIG:      7,
	unix.EBADF:      9,
	unix.EAGAIN:     11,
	unix.ENOMEM:     12,
	unix.EACCES:     13,
	unix.EFAULT:     14,
	unix.EEXIST:     17,
	unix.EINVAL:     22,
	unix.ENOSPC:     28,
	unix.ELOOP:      40,
	unix.EOPNOTSUPP: 95,
	unix.ETIMEDOUT:  110,
}

// ENOTSUPP is the kernel-internal ENOTSUPP (524) that bpf(2) returns for
// operations a map type does not implement; no platform names it, and
// Linux returns it as is.
const ENOTSUPP = unix.Errno(524)
