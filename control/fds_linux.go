//go:build linux

package control

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// maxFDs is the most descriptors a frame carries (a channel's two).
const maxFDs = 4

// fdConn reads a unix connection with recvmsg, keeping the descriptors
// that come with its bytes (SCM_RIGHTS, closed on exec) for the frame
// they came with: the kernel hands them over with the first byte of the
// message they were sent with, which is where a frame starts.
type fdConn struct {
	*net.UnixConn
	mu  sync.Mutex
	fds []*os.File
	oob []byte
}

func newFDConn(c *net.UnixConn) *fdConn {
	return &fdConn{UnixConn: c, oob: make([]byte, unix.CmsgSpace(4*maxFDs))}
}

func (c *fdConn) Read(b []byte) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n, oobn int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), b, c.oob, unix.MSG_CMSG_CLOEXEC)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err == nil {
		err = rerr
	}
	if oobn > 0 {
		c.keep(c.oob[:oobn])
	}
	if err != nil {
		return 0, err
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// keep takes the descriptors out of a control message.
func (c *fdConn) keep(oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			f := os.NewFile(uintptr(fd), fmt.Sprintf("fd %d from the control socket", fd))
			if len(c.fds) >= maxFDs {
				f.Close() // more than any frame carries
				continue
			}
			c.fds = append(c.fds, f)
		}
	}
}

// take returns the descriptors received since the last take.
func (c *fdConn) take() []*os.File {
	c.mu.Lock()
	defer c.mu.Unlock()
	fds := c.fds
	c.fds = nil
	return fds
}

// writeWithFDs writes a frame with descriptors attached to its first byte.
func writeWithFDs(c *net.UnixConn, frame []byte, fds []*os.File) error {
	rights := make([]int, len(fds))
	for i, f := range fds {
		rights[i] = int(f.Fd())
	}
	n, _, err := c.WriteMsgUnix(frame, unix.UnixRights(rights...), nil)
	if err == nil && n < len(frame) {
		_, err = c.Write(frame[n:])
	}
	return err
}
