package tracker

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// FormatEvent renders a slow call as one line of the live output.
func FormatEvent(e Event) string {
	return fmt.Sprintf("%s %7d %7d %-16s %-16s %12s %12s",
		e.Time.Format("15:04:05.000000"), e.PID, e.TID, e.Comm, SyscallName(e.Syscall),
		e.Latency.Round(time.Microsecond/10), e.Threshold.Round(time.Microsecond/10))
}

// EventHeader is the header of FormatEvent's lines.
const EventHeader = "TIME                PID     TID COMM             SYSCALL               LATENCY    THRESHOLD"

// Snapshot holds every syscall's stats at one moment.
type Snapshot [NumSyscalls]Stats

// Snapshot reads every syscall's stats.
func (t *Tracker) Snapshot() *Snapshot {
	var s Snapshot
	for nr := range s {
		s[nr] = t.Stats(uint32(nr))
	}
	return &s
}

// Top returns the n syscalls with the most calls (n 0: all that have
// any), most first.
func (s *Snapshot) Top(n int) []uint32 {
	var nrs []uint32
	for nr := range s {
		if s[nr].Count > 0 {
			nrs = append(nrs, uint32(nr))
		}
	}
	sort.SliceStable(nrs, func(i, j int) bool { return s[nrs[i]].Count > s[nrs[j]].Count })
	if n > 0 && len(nrs) > n {
		nrs = nrs[:n]
	}
	return nrs
}

// WriteTable prints, for the top syscalls by calls since prev (nil: since
// start; top 0: all), the calls, slow calls, mean, p50, p99 and the
// current threshold.
func (t *Tracker) WriteTable(w io.Writer, cur, prev *Snapshot, top int) {
	type row struct {
		nr    uint32
		delta Stats
	}
	var rows []row
	for nr := range cur {
		d := cur[nr]
		if prev != nil {
			d.Count -= min(d.Count, prev[nr].Count)
			d.Slow -= min(d.Slow, prev[nr].Slow)
			d.Sum -= min(d.Sum, prev[nr].Sum)
			for b := range d.Buckets {
				d.Buckets[b] -= min(d.Buckets[b], prev[nr].Buckets[b])
			}
		}
		if d.Count > 0 {
			rows = append(rows, row{uint32(nr), d})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].delta.Count > rows[j].delta.Count })
	if top > 0 && len(rows) > top {
		rows = rows[:top]
	}
	fmt.Fprintf(w, "%-18s %10s %6s %12s %12s %12s %12s\n", "SYSCALL", "CALLS", "SLOW", "MEAN", "P50", "P99", "THRESHOLD")
	for _, r := range rows {
		d := r.delta
		fmt.Fprintf(w, "%-18s %10d %6d %12s %12s %12s %12s\n", SyscallName(r.nr), d.Count, d.Slow,
			(d.Sum / time.Duration(d.Count)).Round(time.Microsecond/10),
			d.Percentile(50), d.Percentile(99), t.Threshold(r.nr))
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
