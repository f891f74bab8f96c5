package helpers

import (
	"bytes"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/vm"
)

// Helpers about "the current task". In userspace the current task is the
// OS thread running the program (a goroutine may move between threads, so
// the thread id is that of the moment of the call) and its process. The
// ids are those of the process's own namespaces, where a kernel program
// sees those of the initial namespaces.

// pid is the process id. A Go process cannot fork without exec, so it
// never changes.
var pid = os.Getpid()

// getCurrentPidTgid is bpf_get_current_pid_tgid: tgid << 32 | tid. The
// kernel's "tgid" is the process id, its "pid" the thread id.
func getCurrentPidTgid(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 {
	return uint64(uint32(pid))<<32 | uint64(uint32(gettid()))
}

// getCurrentUidGid is bpf_get_current_uid_gid: gid << 32 | uid. The
// credentials are read at each call: Go's setuid/setgid change them for
// all threads at run time.
func getCurrentUidGid(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 {
	return uint64(uint32(unix.Getgid()))<<32 | uint64(uint32(unix.Getuid()))
}

// taskCommLen is TASK_COMM_LEN: names are at most 15 bytes and a NUL.
const taskCommLen = 16

// comm is the process name, read once: Go does not name its threads, so
// every thread of the process has this name unless the application renames
// one with prctl.
var comm = sync.OnceValue(func() []byte {
	if b, err := os.ReadFile("/proc/self/comm"); err == nil {
		b = bytes.TrimSuffix(b, []byte("\n"))
		return b[:min(len(b), taskCommLen-1)]
	}
	var buf [taskCommLen]byte
	if err := threadName(&buf); err == nil {
		if i := bytes.IndexByte(buf[:], 0); i >= 0 {
			return append([]byte(nil), buf[:i]...)
		}
	}
	return nil
})

// getCurrentComm is bpf_get_current_comm: copy the name into buf like
// strscpy_pad (truncate, NUL-terminate, zero the rest).
func getCurrentComm(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	size := uint64(uint32(r2)) // u32 in Linux
	buf, ok := env.Bytes(r1, size, true)
	if !ok {
		return badSize(size)
	}
	n := copy(buf[:len(buf)-1], comm())
	clear(buf[n:])
	return 0
}

// badSize is the error for a memory argument the run may not access:
// -EINVAL for a zero size, which Linux's verifier refuses for
// ARG_CONST_SIZE, otherwise -EFAULT.
func badSize(size uint64) uint64 {
	if size == 0 {
		return retEINVAL
	}
	return retEFAULT
}

// getSmpProcessorID is bpf_get_smp_processor_id: the Env's CPU slot, the
// same slot that per-CPU maps use for the run.
func getSmpProcessorID(env *vm.Env, _, _, _, _, _ uint64) uint64 {
	return uint64(env.CPU())
}

// getNumaNodeID is bpf_get_numa_node_id. A Go program does not control
// its threads' NUMA placement; it reports node 0, what a kernel without
// NUMA reports.
func getNumaNodeID(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }
