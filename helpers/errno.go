package helpers

import (
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/maps"
)

// errno is the r0 of a helper failing with e: -e as a 64-bit value.
func errno(e unix.Errno) uint64 { return uint64(-int64(e)) }

// Return values of failing helpers, computed once.
var (
	retEPERM  = errno(unix.EPERM)
	retENOENT = errno(unix.ENOENT)
	retEFAULT = errno(unix.EFAULT)
	retEINVAL = errno(unix.EINVAL)
	retE2BIG  = errno(unix.E2BIG)
	retENOSPC = errno(unix.ENOSPC)
)

// mapErr converts an error of the maps package to r0.
func mapErr(err error) uint64 { return uint64(maps.Errno(err)) }
