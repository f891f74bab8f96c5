//go:build !linux

package helpers

import "golang.org/x/sys/unix"

// Elsewhere the helpers that need Linux do what they can: the clocks are
// the nearest the system has, the thread id is the process id, and
// reading arbitrary memory of the process fails (as bpf_probe_read
// does on an unreadable address).

const (
	clockBoottime        = unix.CLOCK_MONOTONIC
	clockMonotonicCoarse = unix.CLOCK_MONOTONIC
	clockTAI             = unix.CLOCK_REALTIME
)

func gettid() int { return pid }

func processVMReadv([]byte, uint64) (int, error) { return 0, unix.ENOSYS }

func threadName(*[taskCommLen]byte) error { return unix.ENOSYS }
