package kbridge

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/internal/errno"
	"github.com/uebpf/uebpf/maps"
)

// sentinelOf maps an error from cilium/ebpf or the bpf() syscall to the
// sentinel of package maps that stands for the same condition, so callers
// test kernel maps and userspace maps the same way
// (errors.Is(err, maps.ErrKeyNotExist)) and maps.Errno gives a helper's
// return value.
func sentinelOf(err error) error {
	switch {
	case errors.Is(err, ebpf.ErrKeyNotExist), errors.Is(err, unix.ENOENT):
		return maps.ErrKeyNotExist
	case errors.Is(err, ebpf.ErrKeyExist), errors.Is(err, unix.EEXIST):
		return maps.ErrKeyExist
	case errors.Is(err, os.ErrClosed), errors.Is(err, unix.EBADF):
		return maps.ErrClosed
	case errors.Is(err, unix.E2BIG):
		return maps.ErrTooBig
	case errors.Is(err, unix.ENOMEM):
		return maps.ErrNoMemory
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return maps.ErrPermission
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, errno.ENOTSUPP),
		errors.Is(err, unix.EOPNOTSUPP):
		return maps.ErrNotSupported
	}
	return maps.ErrInvalid
}

// wrap builds a Go-side error: `map "name": op: <sentinel> (kernel: <err>)`.
// It matches both the maps sentinel and the original cilium/ebpf error.
func wrap(name, op string, err error) error {
	if err == nil {
		return nil
	}
	s := sentinelOf(err)
	if s == err {
		return fmt.Errorf("map %q: %s: %w", name, op, err)
	}
	return fmt.Errorf("map %q: %s: %w (kernel: %w)", name, op, s, err)
}

// rawError is a preallocated program-side error: the raw-pointer API must
// not allocate when it fails. It names the map and unwraps to a sentinel of
// package maps (which unwraps to the errno), so maps.Errno works.
type rawError struct {
	name string
	err  error
}

func (e *rawError) Error() string { return fmt.Sprintf("map %q: %v", e.name, e.err) }
func (e *rawError) Unwrap() error { return e.err }

// rawErrors holds a map's preallocated raw-API errors, one per sentinel.
type rawErrors map[error]*rawError

var rawSentinels = []error{
	maps.ErrKeyNotExist, maps.ErrKeyExist, maps.ErrTooBig, maps.ErrNoMemory,
	maps.ErrPermission, maps.ErrNotSupported, maps.ErrInvalid, maps.ErrClosed,
}

func newRawErrors(name string) rawErrors {
	r := make(rawErrors, len(rawSentinels))
	for _, s := range rawSentinels {
		r[s] = &rawError{name: name, err: s}
	}
	return r
}

// of converts a kernel error to the map's preallocated error.
func (r rawErrors) of(err error) error {
	if err == nil {
		return nil
	}
	return r[sentinelOf(err)]
}
