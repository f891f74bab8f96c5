package helpers

import (
	"golang.org/x/sys/unix"

	linuxerr "github.com/uebpf/uebpf/internal/errno"
	"github.com/uebpf/uebpf/maps"
)

// errno is the r0 of a helper failing with e: -e as a 64-bit value.
// Programs see Linux's numbers whatever the host.
func errno(e unix.Errno) uint64 { return uint64(-linuxerr.Linux(e)) }

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
