//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// errUsage marks errors in the command line: they exit with status 2.
var errUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// options is the validated command line.
type options struct {
	pids, tids []int
	comm       string
	all        bool
	follow     bool
	keepGoing  bool
	cmd        []string

	cfg      tracker.Config
	interval time.Duration
	table    bool
	top      int
	hist     bool
	syscalls map[uint32]bool // nil: every syscall
	failed   bool
	duration time.Duration
	count    uint64
	relative bool
	json     bool
	metrics  string // address of the Prometheus endpoint, or ""
	unit     tracker.Unit
	warnings []string // printed before tracking starts
}

// commLen is the longest command name the kernel keeps (TASK_COMM_LEN
// less its NUL).
const commLen = 15

// parseArgs parses and checks the command line; help, when asked for, is
// written to out and flag.ErrHelp returned.
func parseArgs(args []string, out io.Writer) (*options, error) {
	fs := flag.NewFlagSet("latency-tracker", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	var (
		o          options
		pids       = fs.String("pid", "", "comma-separated process ids to track (all their threads)")
		pidsShort  = fs.String("p", "", "same as --pid")
		tids       = fs.String("tid", "", "comma-separated thread ids to track")
		policy     = fs.String("policy", "percentile", "threshold policy: percentile or stddev")
		percentile = fs.Float64("percentile", 99, "percentile policy: the percentile, in (0, 100]")
		factor     = fs.Float64("factor", 2, "percentile policy: threshold = percentile × factor (> 0)")
		k          = fs.Float64("k", 3, "stddev policy: threshold = mean + k·stddev (≥ 0)")
		static     = fs.Duration("static", 0, "one threshold for every syscall, instead of a policy (> 0)")
		initial    = fs.Duration("initial", 10*time.Millisecond, "threshold until a syscall has --min-samples")
		minSamples = fs.Uint64("min-samples", 100, "observations before a threshold adapts")
		floor      = fs.Duration("floor", 20*time.Microsecond, "lowest adaptive threshold")
		syscalls   = fs.String("e", "", "only these syscalls, comma-separated (read,write)")
		micro      = fs.Bool("u", false, "print durations in microseconds")
		milli      = fs.Bool("m", false, "print durations in milliseconds")
		perProc    = fs.Bool("P", false, "also print a per-process table every interval")
		perThread  = fs.Bool("T", false, "also print a per-thread table every interval")
	)
	fs.StringVar(&o.comm, "comm", "", "track processes with this command name (rescanned every interval)")
	fs.BoolVar(&o.all, "a", false, "system-wide: track every thread of the machine but the tracker's")
	fs.BoolVar(&o.follow, "follow", false, "also track the child processes the targets create (default on with -- cmd)")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "keep running when every --pid target has exited")
	fs.DurationVar(&o.interval, "interval", time.Second, "how often the policy runs and the table is printed")
	fs.BoolVar(&o.cfg.Decay, "decay", false, "halve the histograms every interval (follow recent behaviour)")
	fs.BoolVar(&o.table, "table", true, "print the per-syscall table every interval")
	fs.IntVar(&o.top, "top", 10, "rows of the tables, most calls first (0: all; with --json all unless given)")
	fs.BoolVar(&o.hist, "hist", true, "print log2 histograms of the --top syscalls on exit")
	fs.BoolVar(&o.failed, "x", false, "report only slow calls that failed")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: until Ctrl-C or the targets exit)")
	fs.Uint64Var(&o.count, "count", 0, "stop after this many slow calls (0: no limit)")
	fs.BoolVar(&o.relative, "r", false, "print times relative to the start, in seconds")
	fs.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics (latency histograms, slow calls, thresholds) on this address, e.g. :9090")
	fs.BoolVar(&o.json, "json", false, "print JSON lines: one object per slow call, per interval table and at the end")
	fs.Usage = func() {} // the flag package calls it on every error
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(out, "usage: latency-tracker [flags] (-p PID | --tid TID | --comm NAME | -a | -- command args...)\n\n")
			fs.SetOutput(out)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", errUsage, err.Error())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.cmd = fs.Args()

	var err error
	pidFlag := "--pid"
	switch {
	case set["p"] && set["pid"]:
		return nil, usageErr("-p and --pid: give the processes once")
	case set["p"]:
		pidFlag, *pids = "-p", *pidsShort
	}
	if o.pids, err = parseIDs(pidFlag, *pids); err != nil {
		return nil, err
	}
	if len(o.comm) > commLen {
		// /proc/PID/comm holds the first 15 bytes of the name: compare
		// those, and say so, rather than match nothing.
		o.warnings = append(o.warnings, fmt.Sprintf("--comm %q: the kernel keeps the first %d bytes of a command name: tracking processes named %q", o.comm, commLen, o.comm[:commLen]))
		o.comm = o.comm[:commLen]
	}
	if o.tids, err = parseIDs("--tid", *tids); err != nil {
		return nil, err
	}
	targets := 0
	for _, on := range []bool{len(o.pids) > 0 || len(o.tids) > 0, o.comm != "", o.all, len(o.cmd) > 0} {
		if on {
			targets++
		}
	}
	switch {
	case targets == 0:
		return nil, usageErr("nothing to track: give -p/--pid, --tid, --comm, -a or a command after --")
	case o.all && targets > 1 && len(o.cmd) == 0:
		return nil, usageErr("-a tracks every thread already: drop --pid, --tid and --comm")
	}
	if len(o.cmd) > 0 && !set["follow"] {
		o.follow = true // as strace -f: a command's children are part of it
	}
	if o.follow && len(o.pids) == 0 && len(o.cmd) == 0 && o.comm == "" {
		return nil, usageErr("--follow needs --pid, --comm or a command")
	}

	switch {
	case o.interval <= 0:
		return nil, usageErr("--interval %v: must be positive", o.interval)
	case *percentile <= 0 || *percentile > 100 || math.IsNaN(*percentile):
		return nil, usageErr("--percentile %g: must be in (0, 100]", *percentile)
	case !(*factor > 0) || math.IsInf(*factor, 0):
		return nil, usageErr("--factor %g: must be positive", *factor)
	case !(*k >= 0) || math.IsInf(*k, 0):
		return nil, usageErr("--k %g: must be zero or more", *k)
	case *static < 0 || set["static"] && *static == 0:
		return nil, usageErr("--static %v: must be positive", *static)
	case *initial <= 0:
		return nil, usageErr("--initial %v: must be positive", *initial)
	case *floor < 0:
		return nil, usageErr("--floor %v: must be zero or more", *floor)
	case o.top < 0:
		return nil, usageErr("--top %d: must be zero (all) or more", o.top)
	case o.duration < 0:
		return nil, usageErr("--duration %v: must be positive", o.duration)
	case *minSamples == 0:
		return nil, usageErr("--min-samples 0: must be at least 1")
	case *micro && *milli:
		return nil, usageErr("-m and -u: choose one unit")
	case *perProc && *perThread:
		return nil, usageErr("-P and -T: choose one")
	}
	if o.json && !set["top"] {
		o.top = 0 // a program reads JSON: every row, unless asked for fewer
	}
	// The policy program works in whole permille and percent.
	if *percentile*10 != math.Trunc(*percentile*10) {
		return nil, usageErr("--percentile %g: at most one decimal", *percentile)
	}
	o.cfg.Percentile, o.cfg.Factor, o.cfg.K = *percentile, *factor, *k
	o.cfg.Initial, o.cfg.MinSamples, o.cfg.Floor = *initial, *minSamples, *floor
	if *floor == 0 {
		o.cfg.Floor = time.Nanosecond // Config's zero means the default
	}
	if *static > 0 {
		if set["policy"] {
			return nil, usageErr("--static and --policy: choose one")
		}
		o.cfg.Policy, o.cfg.Static = tracker.PolicyStatic, *static
	} else {
		p, err := tracker.ParsePolicy(*policy)
		if err != nil || p == tracker.PolicyStatic {
			return nil, usageErr("--policy %q: want percentile or stddev (or --static DURATION)", *policy)
		}
		o.cfg.Policy = p
	}
	switch {
	case *micro:
		o.unit = tracker.Microseconds
	case *milli:
		o.unit = tracker.Milliseconds
	}
	switch {
	case *perProc:
		o.cfg.GroupBy = tracker.GroupProcess
	case *perThread:
		o.cfg.GroupBy = tracker.GroupThread
	}
	if *syscalls != "" {
		o.syscalls = map[uint32]bool{}
		for _, name := range strings.Split(*syscalls, ",") {
			name = strings.TrimSpace(name)
			nr, ok := tracker.SyscallNumber(name)
			if !ok {
				return nil, usageErr("-e: unknown system call %q", name)
			}
			if nr >= tracker.NumSyscalls {
				return nil, usageErr("-e: system call %s (%d) is above the %d tracked", name, nr, tracker.NumSyscalls)
			}
			o.syscalls[nr] = true
		}
	}
	return &o, nil
}

// parseIDs parses a comma-separated list of process or thread ids, each
// of which must exist.
func parseIDs(flagName, list string) ([]int, error) {
	var ids []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		id, err := strconv.Atoi(s)
		if err != nil || id <= 0 {
			return nil, usageErr("%s %q: not a process id", flagName, s)
		}
		// /proc/<id> exists for every thread id too.
		if _, err := os.Stat("/proc/" + strconv.Itoa(id)); err != nil {
			return nil, usageErr("%s %d: no such process", flagName, id)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
