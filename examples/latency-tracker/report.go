//go:build linux

package tracker

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Unit selects how durations are printed: Auto gives each its own unit
// with three significant digits; the others print plain numbers in one
// unit, named in the column headers (as funclatency's -m and -u do).
type Unit int

const (
	Auto Unit = iota
	Nanoseconds
	Microseconds
	Milliseconds
)

// suffix is the unit's name in column headers ("" for Auto).
func (u Unit) suffix() string {
	switch u {
	case Nanoseconds:
		return "(ns)"
	case Microseconds:
		return "(µs)"
	case Milliseconds:
		return "(ms)"
	}
	return ""
}

// FormatDuration renders d in unit u: with Auto, three significant digits
// and the unit ("127ns", "6.10µs", "40.1ms", "1.50s"); with a fixed unit,
// a plain number ("40100.0" µs, "40.100" ms).
func FormatDuration(d time.Duration, u Unit) string {
	switch u {
	case Nanoseconds:
		return strconv.FormatInt(int64(d), 10)
	case Microseconds:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64)
	case Milliseconds:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64)
	}
	v, unit := float64(d), "ns"
	switch {
	case d < 0:
		return "-" + FormatDuration(-d, u)
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + "ns"
	case d < time.Millisecond:
		v, unit = v/1e3, "µs"
	case d < time.Second:
		v, unit = v/1e6, "ms"
	default:
		v, unit = v/1e9, "s"
	}
	prec := 2
	if v >= 100 {
		prec = 0
	} else if v >= 10 {
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + unit
}

// FormatRange renders a histogram bucket [lo, hi] as "lo-hi" with hi
// exclusive, the way log2 buckets are read ("16.4ms-32.8ms").
func FormatRange(lo, hi time.Duration, u Unit) string {
	if hi == 0 {
		return "-"
	}
	return FormatDuration(lo, u) + "-" + FormatDuration(hi+1, u)
}

// ErrnoName names a negative system call return value ("ENOENT"), or
// returns "" for a success.
func ErrnoName(ret int64) string {
	if ret >= 0 || ret < -4095 {
		return ""
	}
	// The kernel's restart codes, which a traced call can return when a
	// signal interrupts it (include/linux/errno.h).
	switch -ret {
	case 512:
		return "ERESTARTSYS"
	case 513:
		return "ERESTARTNOINTR"
	case 514:
		return "ERESTARTNOHAND"
	case 516:
		return "ERESTART_RESTARTBLOCK"
	}
	if name := unix.ErrnoName(syscall.Errno(-ret)); name != "" {
		return name
	}
	return "E" + strconv.FormatInt(-ret, 10)
}

// pointerResults are the system calls whose result is an address.
var pointerResults = map[string]bool{"mmap": true, "mremap": true, "brk": true, "shmat": true}

// FormatReturn renders system call nr's return value as strace does: the
// number, in hex when it is an address (mmap, brk ...), or "-1 ENOENT"
// for a failure.
func FormatReturn(nr uint32, ret int64) string {
	if name := ErrnoName(ret); name != "" {
		return "-1 " + name
	}
	if pointerResults[SyscallName(nr)] {
		return "0x" + strconv.FormatUint(uint64(ret), 16)
	}
	return strconv.FormatInt(ret, 10)
}

// Plural renders n with a noun that agrees with it: "1 slow call", "2
// slow calls".
func Plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatUint(n, 10) + " " + noun + "s"
}

// EventFormat configures FormatEvent.
type EventFormat struct {
	Unit Unit
	// Since, when set, prints times as seconds since then instead of the
	// time of day.
	Since time.Time
}

// Header is the header of the lines FormatEvent renders.
func (f EventFormat) Header() string {
	tm := "TIME"
	if !f.Since.IsZero() {
		tm = "REL(s)"
	}
	return fmt.Sprintf("%-15s %7s %7s %-16s %-16s %12s %12s %s", tm, "PID", "TID", "COMM", "SYSCALL",
		"LATENCY"+f.Unit.suffix(), "THRESHOLD"+f.Unit.suffix(), "RETURN")
}

// Format renders a slow call as one line of the live output.
func (f EventFormat) Format(e Event) string {
	tm := e.Time.Format("15:04:05.000000")
	if !f.Since.IsZero() {
		tm = strconv.FormatFloat(e.Time.Sub(f.Since).Seconds(), 'f', 6, 64)
	}
	return fmt.Sprintf("%-15s %7d %7d %-16s %-16s %12s %12s %s", tm, e.PID, e.TID, e.Comm, SyscallName(e.Syscall),
		FormatDuration(e.Latency, f.Unit), FormatDuration(e.Threshold, f.Unit), FormatReturn(e.Syscall, e.Return))
}

// FormatEvent renders a slow call with the default format.
func FormatEvent(e Event) string { return EventFormat{}.Format(e) }

// EventHeader is the header of FormatEvent's lines.
var EventHeader = EventFormat{}.Header()

// Snapshot holds every syscall's stats at one moment.
type Snapshot [NumSyscalls]Stats

// Snapshot reads every syscall's stats. Counts are cumulative; Min and Max
// cover the time since the previous Snapshot (the first: since start), as
// the kernel's minima and maxima are taken and reset.
func (t *Tracker) Snapshot() *Snapshot {
	var s Snapshot
	for nr := range s {
		s[nr] = t.stats1(uint32(nr), true)
	}
	return &s
}

// Sub returns the calls counted from prev (nil: start) to s, with s's
// Min and Max.
func (s *Snapshot) Sub(prev *Snapshot) *Snapshot {
	d := *s
	if prev == nil {
		return &d
	}
	for nr := range d {
		p := &prev[nr]
		d[nr].Count -= min(d[nr].Count, p.Count)
		d[nr].Slow -= min(d[nr].Slow, p.Slow)
		d[nr].Sum -= min(d[nr].Sum, p.Sum)
		for b := range d[nr].Buckets {
			d[nr].Buckets[b] -= min(d[nr].Buckets[b], p.Buckets[b])
		}
	}
	return &d
}

// MergeMinMax widens s's Min and Max by o's, for a summary over
// intervals.
func (s *Snapshot) MergeMinMax(o *Snapshot) {
	for nr := range s {
		if m := o[nr].Min; m > 0 && (s[nr].Min == 0 || m < s[nr].Min) {
			s[nr].Min = m
		}
		s[nr].Max = max(s[nr].Max, o[nr].Max)
	}
}

// Top returns the n syscalls with the most calls (n 0: all that have
// any), most first; keep, when not nil, chooses the syscalls.
func (s *Snapshot) Top(n int, keep func(nr uint32) bool) []uint32 {
	var nrs []uint32
	for nr := range s {
		if s[nr].Count > 0 && (keep == nil || keep(uint32(nr))) {
			nrs = append(nrs, uint32(nr))
		}
	}
	sort.SliceStable(nrs, func(i, j int) bool { return s[nrs[i]].Count > s[nrs[j]].Count })
	if n > 0 && len(nrs) > n {
		nrs = nrs[:n]
	}
	return nrs
}

// Row is one syscall's line of a table.
type Row struct {
	Syscall   uint32
	Stats     Stats
	Threshold time.Duration
}

// Rows returns the table rows of the syscalls nrs.
func (t *Tracker) Rows(s *Snapshot, nrs []uint32) []Row {
	rows := make([]Row, len(nrs))
	for i, nr := range nrs {
		rows[i] = Row{nr, s[nr], t.Threshold(nr)}
	}
	return rows
}

// TableHeader is the first line WriteTable prints.
func TableHeader(u Unit) string {
	s := u.suffix()
	return fmt.Sprintf("%-18s %9s %6s %9s %9s %9s %-17s %-17s %10s", "SYSCALL", "CALLS", "SLOW",
		"MIN"+s, "MEAN"+s, "MAX"+s, "P50"+s, "P99"+s, "THRESHOLD"+s)
}

// WriteTable prints the rows: calls, slow calls, the exact minimum, mean
// and maximum, the log2 histogram buckets that hold the median and the
// 99th percentile (the histogram tells no more), and the threshold.
func WriteTable(w io.Writer, rows []Row, u Unit) {
	fmt.Fprintln(w, TableHeader(u))
	for _, r := range rows {
		s := &r.Stats
		p50lo, p50hi := s.PercentileRange(50)
		p99lo, p99hi := s.PercentileRange(99)
		fmt.Fprintf(w, "%-18s %9d %6d %9s %9s %9s %-17s %-17s %10s\n", SyscallName(r.Syscall), s.Count, s.Slow,
			FormatDuration(s.Min, u), FormatDuration(s.Mean(), u), FormatDuration(s.Max, u),
			FormatRange(p50lo, p50hi, u), FormatRange(p99lo, p99hi, u), FormatDuration(r.Threshold, u))
	}
}

// WriteHistogram prints a syscall's log2 histogram in the style of the BCC
// tools.
func WriteHistogram(w io.Writer, name string, s *Stats) {
	lo, hi := -1, -1
	var peak uint64
	for b, c := range s.Buckets {
		if c == 0 {
			continue
		}
		if lo < 0 {
			lo = b
		}
		hi = b
		peak = max(peak, c)
	}
	if lo < 0 {
		return
	}
	fmt.Fprintf(w, "\nsyscall = %s\n", name)
	fmt.Fprintf(w, "%24s : %-9s %s\n", "nsecs", "count", "distribution")
	for b := lo; b <= hi; b++ {
		var from uint64
		if b > 0 {
			from = 1 << b
		}
		stars := int(s.Buckets[b] * 40 / peak)
		fmt.Fprintf(w, "%10d -> %-11d : %-9d |%-40s|\n", from, uint64(2)<<b-1, s.Buckets[b], strings.Repeat("*", stars))
	}
}
