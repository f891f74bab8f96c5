package maps

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/internal/errno"
)

// sentinel is an error that carries the errno Linux returns for the same
// condition. errors.Is(err, unix.ENOENT) holds for ErrKeyNotExist and for
// every error wrapping it; parent makes a more specific sentinel also match a
// general one (ErrEmpty matches ErrKeyNotExist).
type sentinel struct {
	msg    string
	errno  unix.Errno
	parent *sentinel
}

func (e *sentinel) Error() string { return e.msg }

// Unwrap exposes the errno, so errors.Is(err, unix.ENOENT) and
// errors.As(err, &errno) work.
func (e *sentinel) Unwrap() error { return e.errno }

func (e *sentinel) Is(target error) bool {
	for p := e.parent; p != nil; p = p.parent {
		if target == error(p) {
			return true
		}
	}
	return false
}

// Sentinel errors. Every error returned by this package wraps one of them (or
// is os.ErrDeadlineExceeded); each also matches the errno Linux uses for the
// condition, and Errno converts any of them to a helper's return value.
var (
	ErrKeyNotExist  error = errKeyNotExist
	ErrKeyExist     error = errKeyExist
	ErrMapFull      error = errMapFull
	ErrTooBig       error = errTooBig
	ErrInvalid      error = errInvalid
	ErrNoMemory     error = errNoMemory
	ErrPermission   error = errPermission
	ErrNotSupported error = errNotSupported
	ErrEmpty        error = errEmpty
	ErrRingBufFull  error = errRingBufFull
	// ErrClosed is returned by a closed ring buffer Reader. It is
	// os.ErrClosed, like cilium/ebpf's ringbuf.ErrClosed.
	ErrClosed = os.ErrClosed
)

var (
	errKeyNotExist  = &sentinel{msg: "key does not exist", errno: unix.ENOENT}
	errKeyExist     = &sentinel{msg: "key already exists", errno: unix.EEXIST}
	errMapFull      = &sentinel{msg: "map is full", errno: unix.E2BIG}
	errTooBig       = &sentinel{msg: "argument too big", errno: unix.E2BIG}
	errInvalid      = &sentinel{msg: "invalid argument", errno: unix.EINVAL}
	errNoMemory     = &sentinel{msg: "cannot allocate memory", errno: unix.ENOMEM}
	errPermission   = &sentinel{msg: "operation not permitted", errno: unix.EPERM}
	errNotSupported = &sentinel{msg: "operation not supported", errno: errno.ENOTSUPP}
	errEmpty        = &sentinel{msg: "map is empty", errno: unix.ENOENT, parent: errKeyNotExist}
	errRingBufFull  = &sentinel{msg: "ring buffer is full", errno: unix.EAGAIN}
	// errTrieFull: Linux's LPM trie reports a full map with ENOSPC.
	errTrieFull = &sentinel{msg: "map is full", errno: unix.ENOSPC, parent: errMapFull}
)

// mapError is a sentinel wrapped with the name of the map. Maps build one per
// sentinel when they are created, so that the raw-pointer API can return
// errors that name the map without allocating.
type mapError struct {
	name string
	err  *sentinel
}

func (e *mapError) Error() string { return fmt.Sprintf("map %q: %s", e.name, e.err.msg) }
func (e *mapError) Unwrap() error { return e.err }

// errSet holds a map's preallocated errors.
type errSet struct {
	notExist, exist, full, tooBig, invalid, noMem, perm, notSupp, empty, rbFull, trieFull *mapError
}

func newErrSet(name string) *errSet {
	mk := func(s *sentinel) *mapError { return &mapError{name: name, err: s} }
	return &errSet{
		notExist: mk(errKeyNotExist), exist: mk(errKeyExist), full: mk(errMapFull),
		tooBig: mk(errTooBig), invalid: mk(errInvalid), noMem: mk(errNoMemory),
		perm: mk(errPermission), notSupp: mk(errNotSupported), empty: mk(errEmpty),
		rbFull: mk(errRingBufFull), trieFull: mk(errTrieFull),
	}
}

// Errno returns the value a helper function returns to the eBPF program for
// err: 0 for nil, otherwise the negative Linux errno (-ENOENT for a missing
// key, -EEXIST for BPF_NOEXIST on an existing key, -E2BIG for a full map,
// -EINVAL for bad flags, ...). Errors that carry no errno give -EINVAL.
func Errno(err error) int64 {
	switch e := err.(type) {
	case nil:
		return 0
	case *mapError:
		return -errno.Linux(e.err.errno)
	case *sentinel:
		return -errno.Linux(e.errno)
	case unix.Errno:
		return -errno.Linux(e)
	}
	var n unix.Errno
	if errors.As(err, &n) {
		return -errno.Linux(n)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return -errno.Linux(unix.ETIMEDOUT)
	}
	if errors.Is(err, os.ErrClosed) {
		return -errno.Linux(unix.EBADF)
	}
	return -errno.Linux(unix.EINVAL)
}

// wrapf builds a Go-side error: `map "name": <what>: <sentinel>`.
func (b *base) wrapf(err error, format string, args ...any) error {
	if me, ok := err.(*mapError); ok {
		err = me.err
	}
	return fmt.Errorf("map %q: %s: %w", b.spec.Name, fmt.Sprintf(format, args...), err)
}
