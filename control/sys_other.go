//go:build !linux

package control

import (
	"fmt"
	"io/fs"
	"net"
	"runtime"
)

func supported() error { return fmt.Errorf("%s: %w", runtime.GOOS, ErrUnsupported) }

type cred struct{ uid, pid int }

func peerCred(*net.UnixConn) (cred, error) { return cred{}, supported() }

func allowed(int) bool { return false }

func ownerUID(fs.FileInfo) (int, bool) { return 0, false }

func processAlive(int) bool { return false }
