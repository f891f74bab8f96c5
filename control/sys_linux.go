//go:build linux

package control

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func supported() error { return nil }

type cred struct{ uid, pid int }

// peerCred returns the credentials of the process at the other end of c,
// as the kernel recorded them when it connected (SO_PEERCRED).
func peerCred(c *net.UnixConn) (cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return cred{}, err
	}
	var uc *unix.Ucred
	var uerr error
	if err := raw.Control(func(fd uintptr) {
		uc, uerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return cred{}, err
	}
	if uerr != nil {
		return cred{}, fmt.Errorf("SO_PEERCRED: %w", uerr)
	}
	return cred{uid: int(uc.Uid), pid: int(uc.Pid)}, nil
}

// allowed says whether a peer of uid may use the socket: the same uid or
// root.
func allowed(uid int) bool { return uid == 0 || uid == os.Getuid() }

func ownerUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
