//go:build linux

// Command latency-tracker reports the system calls of chosen processes or
// threads that take longer than their usual latency. Kernel eBPF programs
// measure, userspace eBPF programs (run by uebpf in this process, over the
// same maps) set each syscall's threshold from the observed behaviour.
// Needs root.
//
//	latency-tracker -p 1234 --follow
//	latency-tracker --comm nginx --policy stddev --k 4
//	latency-tracker --static 1ms -e read,write --json -- ./server --port 8080
//	latency-tracker -a -P --duration 10s
//	latency-tracker -a --metrics :9090
//
// Exit status: 2 for a bad command line; with a command, the command's own
// status (128+n when signal n ended it); else 0, or 1 on an error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/metrics"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// shimEnv marks the re-executed tracker that waits until the tracker has
// asked the kernel to track it from its next execve, then executes the
// command in its own process: the command is tracked from its first
// system call, and the shim's own start-up is not.
const shimEnv = "LATENCY_TRACKER_SHIM"

// How long a command has to exit after the tracker passes it SIGINT,
// before it is killed.
const cmdGrace = 3 * time.Second

func main() {
	if os.Getenv(shimEnv) != "" {
		shim()
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "latency-tracker: %s\n(latency-tracker -h lists the flags)\n", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		return 2
	}
	for _, w := range o.warnings {
		fmt.Fprintln(stderr, "latency-tracker:", w)
	}
	status, err := track(o, &lockedWriter{w: stdout})
	if err != nil {
		fmt.Fprintln(stderr, "latency-tracker:", err)
		return 1
	}
	return status
}

// lockedWriter serialises the event reader's lines and the tables.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// stopReason says why tracking ended.
type stopReason string

func track(o *options, out *lockedWriter) (status int, err error) {
	tr, err := tracker.New(o.cfg)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := tr.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()

	if o.metrics != "" {
		ln, err := metrics.Serve(o.metrics, tr.Collector())
		if err != nil {
			return 0, fmt.Errorf("--metrics: %w", err)
		}
		defer ln.Close()
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	// Targets.
	stop := make(chan stopReason, 4)
	if o.all {
		if err := tr.TrackAll(); err != nil {
			return 0, err
		}
	}
	for _, pid := range o.pids {
		if err := tr.TrackProcess(pid, o.follow); err != nil {
			return 0, err
		}
	}
	for _, tid := range o.tids {
		if _, err := tr.Track(tid); err != nil {
			return 0, err
		}
	}
	if len(o.pids) > 0 && !o.keepGoing && len(o.tids) == 0 && o.comm == "" && !o.all && len(o.cmd) == 0 {
		if err := watchExits(o.pids, stop); err != nil {
			return 0, err
		}
	}
	rescan := func() {
		if o.comm != "" {
			for _, pid := range findComm(o.comm) {
				tr.TrackProcess(pid, o.follow) // gone since: nothing to track
			}
		}
	}
	rescan()
	var cmd *exec.Cmd
	cmdDone := make(chan error, 1)
	if len(o.cmd) > 0 {
		if cmd, err = startTracked(tr, o.cmd, o.follow); err != nil {
			return 0, err
		}
		go func() { cmdDone <- cmd.Wait() }()
	}

	start := time.Now()
	p := &printer{o: o, tr: tr, w: out}
	if o.relative {
		p.ef.Since = start
	}
	p.ef.Unit = o.unit
	p.begin()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readDone := make(chan error, 1)
	go func() {
		readDone <- tr.ReadEvents(ctx, func(e tracker.Event) {
			if p.event(e) && o.count > 0 && p.reported == o.count {
				stop <- stopReason(fmt.Sprintf("--count %d reached", o.count))
			}
		})
	}()

	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	var deadline <-chan time.Time
	if o.duration > 0 {
		deadline = time.After(o.duration)
	}
	first := tr.Snapshot()
	prev, total := first, first
	var prevTasks []tracker.TaskStats
	var cmdErr error
	cmdExited := false
	readExited := false
loop:
	for {
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "latency-tracker: %v: stopping\n", s)
			break loop
		case cmdErr = <-cmdDone:
			cmdExited = true
			break loop
		case why := <-stop:
			fmt.Fprintf(os.Stderr, "latency-tracker: %s: stopping\n", why)
			break loop
		case <-deadline:
			break loop
		case err = <-readDone:
			readExited = true
			break loop
		case now := <-tick.C:
			rescan()
			if _, err := tr.UpdateThresholds(); err != nil {
				return 0, err
			}
			cur := tr.Snapshot()
			total.MergeMinMax(cur)
			tasks, err := tr.TaskStats()
			if err != nil {
				return 0, err
			}
			if o.table {
				p.table(now, cur.Sub(prev), taskDelta(tasks, prevTasks))
			}
			prev, prevTasks = cur, tasks
			if len(o.tids) > 0 && !o.keepGoing && len(o.pids) == 0 && !o.all && len(o.cmd) == 0 && o.comm == "" && !anyAlive(o.tids) {
				fmt.Fprintln(os.Stderr, "latency-tracker: every --tid thread has exited: stopping")
				break loop
			}
		}
	}

	// The command ends first (its interrupted call then returns and is
	// counted), then the events still in the ring buffer are printed, and
	// only then the summary.
	if cmd != nil && !cmdExited {
		cmd.Process.Signal(os.Interrupt)
		select {
		case cmdErr = <-cmdDone:
		case <-sigs: // a second Ctrl-C: do not wait
			cmd.Process.Kill()
			cmdErr = <-cmdDone
		case <-time.After(cmdGrace):
			cmd.Process.Kill()
			cmdErr = <-cmdDone
		}
	}
	cancel()
	if !readExited {
		err = <-readDone
	}
	if err != nil {
		return 0, err
	}
	cur := tr.Snapshot()
	total.MergeMinMax(cur)
	tasks, terr := tr.TaskStats()
	if terr != nil {
		return 0, terr
	}
	status = 0
	if cmd != nil {
		status = exitStatus(cmd, cmdErr)
	}
	p.summary(time.Since(start), cur.Sub(nil), total, tasks, cmd != nil, status)
	return status, nil
}

// exitStatus is the command's exit status as a shell reports it.
func exitStatus(cmd *exec.Cmd, err error) int {
	ps := cmd.ProcessState
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// watchExits sends on stop once every process of pids has exited.
func watchExits(pids []int, stop chan<- stopReason) error {
	var wg sync.WaitGroup
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			return fmt.Errorf("watching process %d: %w", pid, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer unix.Close(fd)
			// A pidfd is readable once the process has exited.
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for {
				if _, err := unix.Poll(fds, -1); err != unix.EINTR {
					break
				}
			}
			fmt.Fprintf(os.Stderr, "latency-tracker: process %d exited\n", pid)
		}()
	}
	go func() {
		wg.Wait()
		what := "the process has exited"
		if len(pids) > 1 {
			what = "every --pid process has exited"
		}
		stop <- stopReason(what + " (--keep-going keeps tracking)")
	}()
	return nil
}

func anyAlive(tids []int) bool {
	for _, tid := range tids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(tid)); err == nil {
			return true
		}
	}
	return false
}

// startTracked starts args as a tracked process: a copy of this program
// starts, the kernel is told to track it from its next execve, and then it
// executes the command in the same process.
func startTracked(tr *tracker.Tracker, args []string, follow bool) (*exec.Cmd, error) {
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	defer w.Close()
	// started tells that the shim runs: its own execve is over. Start
	// returns as soon as the exec closed the child's close-on-exec
	// descriptors, which is before the kernel's sched_process_exec of
	// that exec: marked then, the shim's exec would be the one tracked.
	startedR, startedW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer startedR.Close()
	defer startedW.Close()
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Path = "/proc/self/exe"
	cmd.Args = append([]string{path}, args[1:]...)
	cmd.Env = append(os.Environ(), shimEnv+"="+path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, startedW} // fd 3, fd 4
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	startedW.Close()
	fail := func(err error) (*exec.Cmd, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	var b [1]byte
	if n, _ := startedR.Read(b[:]); n != 1 {
		return fail(fmt.Errorf("starting %s: the tracker's shim did not start", path))
	}
	if err := tr.TrackOnExec(cmd.Process.Pid, follow); err != nil {
		return fail(err)
	}
	if _, err := w.Write([]byte{1}); err != nil {
		return fail(fmt.Errorf("starting %s: %w", path, err))
	}
	return cmd, nil
}

// shim waits until the tracker is ready, then executes the command (its
// path in the environment, its arguments ours).
func shim() {
	path := os.Getenv(shimEnv)
	ready, started := os.NewFile(3, "ready"), os.NewFile(4, "started")
	if _, err := started.Write([]byte{1}); err != nil {
		os.Exit(127)
	}
	started.Close()
	var b [1]byte
	if n, _ := ready.Read(b[:]); n != 1 {
		os.Exit(127) // the tracker went away
	}
	ready.Close()
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, shimEnv+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(path, os.Args, env)
	fmt.Fprintf(os.Stderr, "latency-tracker: exec %s: %v\n", path, err)
	os.Exit(127)
}

// findComm returns the processes whose command name is name.
func findComm(name string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err == nil && strings.TrimSuffix(string(b), "\n") == name {
			pids = append(pids, pid)
		}
	}
	return pids
}
