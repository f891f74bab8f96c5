//go:build !linux

package control

import (
	"errors"
	"net"
	"os"
)

// fdConn is a unix connection; descriptors pass on Linux only.
type fdConn struct{ *net.UnixConn }

func newFDConn(c *net.UnixConn) *fdConn { return &fdConn{c} }

func (c *fdConn) take() []*os.File { return nil }

func writeWithFDs(*net.UnixConn, []byte, []*os.File) error {
	return errors.New("descriptors pass over unix sockets on Linux only")
}
