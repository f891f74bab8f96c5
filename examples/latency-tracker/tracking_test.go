//go:build linux

package tracker_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// The workload: after a line on stdin, the script makes a new thread or
// a new process that sleeps 50ms and prints its ids ("pid tid"), then
// waits for it.
const workload = `
import os, sys, threading, time
def nap():
    print(os.getpid(), threading.get_native_id(), flush=True)
    time.sleep(0.05)
sys.stdin.readline()
if sys.argv[1] == "thread":
    t = threading.Thread(target=nap); t.start(); t.join()
else:
    pid = os.fork()
    if pid == 0:
        nap(); os._exit(0)
    os.waitpid(pid, 0)
`

type workloadProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startWorkload(t *testing.T, mode string) *workloadProc {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command(py, "-c", workload, mode)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &workloadProc{cmd, in, bufio.NewReader(out)}
}

// run lets the workload go and returns the ids its new task printed.
func (w *workloadProc) run(t *testing.T) (pid, tid uint32) {
	t.Helper()
	io.WriteString(w.in, "\n")
	line, err := w.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(line)
	p, _ := strconv.Atoi(f[0])
	q, _ := strconv.Atoi(f[1])
	if err := w.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return uint32(p), uint32(q)
}

// findSleep returns the 50ms clock_nanosleep events of the task.
func findSleep(events []tracker.Event, pid, tid uint32) int {
	n := 0
	for _, e := range events {
		if e.Syscall == 230 && e.PID == pid && e.TID == tid && e.Latency >= 50*time.Millisecond {
			n++
		}
	}
	return n
}

// A tracked process's threads created after TrackProcess are tracked by
// the kernel program (task_newtask), with their own thread ids; its new
// processes only when followed.
func TestTrackProcessNewTasks(t *testing.T) {
	tests := []struct {
		mode   string
		follow bool
		want   int
	}{{"thread", false, 1}, {"fork", true, 1}, {"fork", false, 0}}
	for _, tt := range tests {
		t.Run(tt.mode+"/follow="+strconv.FormatBool(tt.follow), func(t *testing.T) {
			tr := newTracker(t, tracker.Config{Policy: tracker.PolicyStatic, Static: 20 * time.Millisecond})
			c := collect(tr)
			defer c.stop(t)
			w := startWorkload(t, tt.mode)
			if err := tr.TrackProcess(w.cmd.Process.Pid, tt.follow); err != nil {
				t.Fatal(err)
			}
			pid, tid := w.run(t)
			if tt.mode == "thread" && (pid != uint32(w.cmd.Process.Pid) || tid == pid) ||
				tt.mode == "fork" && pid == uint32(w.cmd.Process.Pid) {
				t.Fatalf("workload printed pid %d tid %d (process %d)", pid, tid, w.cmd.Process.Pid)
			}
			events := c.take(tr, slowSent(tr))
			if got := findSleep(events, pid, tid); got != tt.want {
				t.Errorf("%d sleeps of the new task (pid %d tid %d) reported, want %d; events %+v", got, pid, tid, tt.want, events)
			}
			// Its exit cleared its bit: a reused id starts untracked.
			if tr.Tracked(int(tid)) {
				t.Errorf("thread %d still tracked after it exited", tid)
			}
		})
	}
}

func TestTrackProcessMissing(t *testing.T) {
	tr := newTracker(t, tracker.Config{})
	if err := tr.TrackProcess(1<<22-1, false); !errors.Is(err, tracker.ErrNoProcess) {
		t.Errorf("TrackProcess of a missing process: %v, want ErrNoProcess", err)
	}
}

// System-wide: every thread is tracked but this process's, including the
// threads it starts afterwards.
func TestTrackAll(t *testing.T) {
	tr := newTracker(t, tracker.Config{Policy: tracker.PolicyStatic, Static: 20 * time.Millisecond})
	w := startWorkload(t, "thread") // started before: tracked by the bitmap fill
	if err := tr.TrackAll(); err != nil {
		t.Fatal(err)
	}
	c := collect(tr)
	defer c.stop(t)
	pid, tid := w.run(t)
	done := make(chan int)
	go func() { // likely on a new thread of this process: never tracked
		unix.Nanosleep(&unix.Timespec{Nsec: int64(30 * time.Millisecond)}, nil)
		done <- unix.Gettid()
	}()
	mine := <-done
	events := c.take(tr, slowSent(tr))
	if findSleep(events, pid, tid) != 1 {
		t.Errorf("the workload's new thread's sleep not reported")
	}
	self := uint32(os.Getpid())
	for _, e := range events {
		if e.PID == self {
			t.Errorf("the tracker's own call reported: %+v (thread %d slept)", e, mine)
		}
	}
	if tr.Tracked(unix.Gettid()) || tr.Tracked(mine) {
		t.Errorf("the tracker's own threads are tracked")
	}
}

// Per-process and per-thread counts (Config.GroupBy) are exact for a
// thread whose calls are known.
func TestTaskStats(t *testing.T) {
	for _, g := range []tracker.Grouping{tracker.GroupProcess, tracker.GroupThread} {
		tr := newTracker(t, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Hour, GroupBy: g})
		const n = 200
		tid := func() int {
			tid := lockTracked(t, tr)
			defer runtime.UnlockOSThread()
			for i := 0; i < n; i++ {
				unix.Getppid()
			}
			tr.Untrack(tid)
			return tid
		}()
		want := uint32(tid)
		if g == tracker.GroupProcess {
			want = uint32(os.Getpid())
		}
		ts, err := tr.TaskStats()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range ts {
			if s.ID == want && s.Syscall == sysGetppid {
				found = true
				if s.Count != n || s.Slow != 0 || s.Max <= 0 || s.Sum < s.Max {
					t.Errorf("grouping %d: %+v, want %d calls", g, s, n)
				}
			}
		}
		if !found {
			t.Errorf("grouping %d: no getppid counts for id %d in %+v", g, want, ts)
		}
	}
}
