// Command latency-tracker reports the system calls of chosen processes or
// threads that take longer than their usual latency. Kernel eBPF programs
// measure, userspace eBPF programs (run by uebpf in this process, over the
// same maps) set each syscall's threshold from the observed behaviour.
// Needs root.
//
//	latency-tracker --pid 1234
//	latency-tracker --comm nginx --policy stddev --k 4
//	latency-tracker --static 1ms -- ./server --port 8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// shimEnv marks the re-executed tracker that waits to be tracked, then
// executes the command in its own process, so the command is tracked from
// its first system call.
const shimEnv = "LATENCY_TRACKER_SHIM"

func main() {
	if os.Getenv(shimEnv) != "" {
		shim()
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "latency-tracker:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		pids       = flag.String("pid", "", "comma-separated process ids to track (all their threads)")
		tids       = flag.String("tid", "", "comma-separated thread ids to track")
		comm       = flag.String("comm", "", "track processes with this command name (rescanned every interval)")
		interval   = flag.Duration("interval", time.Second, "how often the policy runs and the table is printed")
		policy     = flag.String("policy", "percentile", "threshold policy: percentile or stddev")
		percentile = flag.Float64("percentile", 99, "percentile policy: the percentile")
		factor     = flag.Float64("factor", 2, "percentile policy: threshold = percentile × factor")
		k          = flag.Float64("k", 3, "stddev policy: threshold = mean + k·stddev")
		static     = flag.Duration("static", 0, "static threshold for every syscall, instead of a policy")
		initial    = flag.Duration("initial", 10*time.Millisecond, "threshold until a syscall has --min-samples")
		minSamples = flag.Uint64("min-samples", 100, "observations before a threshold adapts")
		floor      = flag.Duration("floor", 20*time.Microsecond, "lowest adaptive threshold")
		decay      = flag.Bool("decay", false, "halve the histograms every interval (follow recent behaviour)")
		table      = flag.Bool("table", true, "print the per-syscall table every interval")
		top        = flag.Int("top", 10, "rows of the table (0: all)")
		hist       = flag.Bool("hist", true, "print log2 histograms of the --top syscalls on exit")
	)
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [flags] [--pid PID | --tid TID | --comm NAME | -- command args...]\n", filepath.Base(os.Args[0]))
		flag.PrintDefaults()
	}
	flag.Parse()
	if *pids == "" && *tids == "" && *comm == "" && flag.NArg() == 0 {
		flag.Usage()
		return errors.New("nothing to track: give --pid, --comm or a command")
	}
	cfg := tracker.Config{
		Percentile: *percentile, Factor: *factor, K: *k, Initial: *initial,
		MinSamples: *minSamples, Floor: *floor, Decay: *decay,
	}
	if *static > 0 {
		cfg.Policy, cfg.Static = tracker.PolicyStatic, *static
	} else {
		p, err := tracker.ParsePolicy(*policy)
		if err != nil {
			return err
		}
		cfg.Policy = p
	}

	tr, err := tracker.New(cfg)
	if err != nil {
		return err
	}
	defer tr.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	for _, list := range []struct {
		flag, ids string
		track     func(int) (bool, error)
	}{{"--pid", *pids, tr.TrackProcess}, {"--tid", *tids, tr.Track}} {
		for _, s := range strings.Split(list.ids, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			id, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("%s %q: %w", list.flag, s, err)
			}
			if _, err := list.track(id); err != nil {
				return err
			}
		}
	}
	var cmd *exec.Cmd
	cmdDone := make(chan error, 1)
	if flag.NArg() > 0 {
		if cmd, err = startTracked(tr, flag.Args()); err != nil {
			return err
		}
		go func() { cmdDone <- cmd.Wait() }()
	}
	rescan := func() {
		if *comm != "" {
			for _, pid := range findComm(*comm) {
				tr.TrackProcess(pid)
			}
		}
	}
	rescan()

	fmt.Printf("Tracking syscalls; policy %s. Ctrl-C to stop.\n%s\n", describe(tr.Config()), tracker.EventHeader)
	readErr := make(chan error, 1)
	go func() {
		readErr <- tr.ReadEvents(ctx, func(e tracker.Event) { fmt.Println(tracker.FormatEvent(e)) })
	}()

	tick := time.NewTicker(*interval)
	defer tick.Stop()
	prev := tr.Snapshot()
	var reported uint64
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-cmdDone:
			if err != nil {
				fmt.Fprintf(os.Stderr, "command: %v\n", err)
			}
			break loop
		case err := <-readErr:
			return err
		case <-tick.C:
			rescan()
			if _, err := tr.UpdateThresholds(); err != nil {
				return err
			}
			cur := tr.Snapshot()
			if *table {
				fmt.Printf("\n--- %s: last %v ---\n", time.Now().Format("15:04:05"), *interval)
				tr.WriteTable(os.Stdout, cur, prev, *top)
				if d := tr.Drops(); d > reported {
					fmt.Printf("WARNING: %d slow calls dropped (ring buffer full)\n", d-reported)
					reported = d
				}
				fmt.Println()
			}
			prev = cur
		}
	}
	stop()
	if cmd != nil && cmd.ProcessState == nil {
		cmd.Process.Signal(os.Interrupt)
	}
	if *hist {
		snap := tr.Snapshot()
		for _, nr := range snap.Top(*top) {
			tracker.WriteHistogram(os.Stdout, tracker.SyscallName(nr), &snap[nr])
		}
	}
	fmt.Printf("\n%d slow calls reported, %d dropped\n", tr.Delivered(), tr.Drops())
	return tr.Close()
}

func describe(c tracker.Config) string {
	switch c.Policy {
	case tracker.PolicyStatic:
		return fmt.Sprintf("static %v", c.Static)
	case tracker.PolicyStddev:
		return fmt.Sprintf("stddev: mean + %g·stddev (floor %v, %d samples)", c.K, c.Floor, c.MinSamples)
	}
	return fmt.Sprintf("percentile: p%g × %g (floor %v, %d samples)", c.Percentile, c.Factor, c.Floor, c.MinSamples)
}

// startTracked starts args as a tracked process: a copy of this program
// starts, is tracked, and then executes the command in the same process.
func startTracked(tr *tracker.Tracker, args []string) (*exec.Cmd, error) {
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
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Path = "/proc/self/exe"
	cmd.Args = append([]string{path}, args[1:]...)
	cmd.Env = append(os.Environ(), shimEnv+"="+path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r} // fd 3
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if _, err := tr.TrackProcess(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	if _, err := w.Write([]byte{1}); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return cmd, nil
}

// shim waits until the tracker tracks this process, then executes the
// command (its path in the environment, its arguments ours).
func shim() {
	path := os.Getenv(shimEnv)
	ready := os.NewFile(3, "ready")
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
		if err == nil && strings.TrimSpace(string(b)) == name {
			pids = append(pids, pid)
		}
	}
	return pids
}
