//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

// printer writes the live output, as text or as JSON lines.
type printer struct {
	o        *options
	tr       *tracker.Tracker
	w        io.Writer
	ef       tracker.EventFormat
	reported uint64 // slow calls printed
}

// jsonEvent is one slow call in --json output.
type jsonEvent struct {
	Type        string  `json:"type"` // "slow"
	Time        string  `json:"time"` // RFC 3339, nanoseconds
	RelS        float64 `json:"rel_s,omitempty"`
	PID         uint32  `json:"pid"`
	TID         uint32  `json:"tid"`
	Comm        string  `json:"comm"`
	Syscall     string  `json:"syscall"`
	LatencyNs   int64   `json:"latency_ns"`
	ThresholdNs int64   `json:"threshold_ns"`
	Ret         int64   `json:"ret"`
	Errno       string  `json:"errno,omitempty"`
}

// jsonRow is one syscall of a --json table. The percentiles are the log2
// histogram bucket [lo, hi] that holds them.
type jsonRow struct {
	Syscall     string   `json:"syscall"`
	Calls       uint64   `json:"calls"`
	Slow        uint64   `json:"slow"`
	MinNs       int64    `json:"min_ns"`
	MeanNs      int64    `json:"mean_ns"`
	MaxNs       int64    `json:"max_ns"`
	P50Ns       [2]int64 `json:"p50_bucket_ns"`
	P99Ns       [2]int64 `json:"p99_bucket_ns"`
	ThresholdNs int64    `json:"threshold_ns"`
}

// jsonTask is one process's or thread's calls of one syscall.
type jsonTask struct {
	ID      uint32 `json:"id"`
	Comm    string `json:"comm"`
	Syscall string `json:"syscall"`
	Calls   uint64 `json:"calls"`
	Slow    uint64 `json:"slow"`
	MeanNs  int64  `json:"mean_ns"`
	MaxNs   int64  `json:"max_ns"` // since start
}

// jsonTable is an interval's table ("table") or the whole run's
// ("summary").
type jsonTable struct {
	Type       string     `json:"type"`
	Time       string     `json:"time"`
	IntervalNs int64      `json:"interval_ns"`
	Syscalls   []jsonRow  `json:"syscalls"`
	Tasks      []jsonTask `json:"tasks,omitempty"`
	TasksBy    string     `json:"tasks_by,omitempty"` // "process" or "thread"
	// Rows --top left out (absent: none).
	SyscallsOmitted int `json:"syscalls_omitted,omitempty"`
	TasksOmitted    int `json:"tasks_omitted,omitempty"`
	// Summary only.
	SlowReported *uint64 `json:"slow_reported,omitempty"`
	Dropped      *uint64 `json:"dropped,omitempty"`
	ExitStatus   *int    `json:"exit_status,omitempty"`
}

func (p *printer) begin() {
	if p.o.json {
		return
	}
	c := p.tr.Config()
	fmt.Fprintf(p.w, "Tracking syscalls; policy %s. Ctrl-C to stop.\n%s\n", describe(c), p.ef.Header())
}

func describe(c tracker.Config) string {
	d := func(v time.Duration) string {
		return strings.TrimSpace(tracker.FormatDuration(v, tracker.Auto))
	}
	switch c.Policy {
	case tracker.PolicyStatic:
		return "static " + d(c.Static)
	case tracker.PolicyStddev:
		return fmt.Sprintf("stddev: mean + %g·stddev (floor %s, %d samples)", c.K, d(c.Floor), c.MinSamples)
	}
	return fmt.Sprintf("percentile: p%g × %g (floor %s, %d samples)", c.Percentile, c.Factor, d(c.Floor), c.MinSamples)
}

// keep reports whether syscall nr is shown (-e).
func (p *printer) keep(nr uint32) bool { return p.o.syscalls == nil || p.o.syscalls[nr] }

// event prints a slow call unless -e or -x leaves it out, and reports
// whether it did.
func (p *printer) event(e tracker.Event) bool {
	if !p.keep(e.Syscall) || p.o.failed && e.Return >= 0 {
		return false
	}
	if p.o.count > 0 && p.reported >= p.o.count {
		return false
	}
	p.reported++
	if !p.o.json {
		fmt.Fprintln(p.w, p.ef.Format(e))
		return true
	}
	je := jsonEvent{
		Type: "slow", Time: e.Time.UTC().Format(time.RFC3339Nano), PID: e.PID, TID: e.TID, Comm: e.Comm,
		Syscall: tracker.SyscallName(e.Syscall), LatencyNs: int64(e.Latency), ThresholdNs: int64(e.Threshold),
		Ret: e.Return, Errno: tracker.ErrnoName(e.Return),
	}
	if p.o.relative {
		je.RelS = e.Time.Sub(p.ef.Since).Seconds()
	}
	p.writeJSON(je)
	return true
}

func (p *printer) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil { // plain values only: not expected
		b, _ = json.Marshal(map[string]string{"type": "error", "error": err.Error()})
	}
	p.w.Write(append(b, '\n'))
}

// table prints one interval's table (and per-task table).
func (p *printer) table(now time.Time, d *tracker.Snapshot, tasks []tracker.TaskStats) {
	nrs, omitted := top(d.Top(0, p.keep), p.o.top)
	rows := p.tr.Rows(d, nrs)
	tasks, tasksOmitted := top(p.sortTasks(tasks), p.o.top)
	if p.o.json {
		t := p.jsonTable("table", now, p.o.interval, rows, tasks)
		t.SyscallsOmitted, t.TasksOmitted = omitted, tasksOmitted
		p.writeJSON(t)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- %s: last %v ---\n", now.Format("15:04:05"), p.o.interval)
	tracker.WriteTable(&b, rows, p.o.unit)
	writeOmitted(&b, omitted, "syscall")
	p.writeTasks(&b, tasks, tasksOmitted)
	if dr := p.tr.Drops(); dr > 0 {
		fmt.Fprintf(&b, "WARNING: %s dropped so far (ring buffer full)\n", tracker.Plural(dr, "slow call"))
	}
	b.WriteString("\n")
	io.WriteString(p.w, b.String())
}

// summary prints the whole run: its table, histograms and counts.
func (p *printer) summary(elapsed time.Duration, all, minmax *tracker.Snapshot, tasks []tracker.TaskStats, withCmd bool, status int) {
	for nr := range all {
		all[nr].Min, all[nr].Max = minmax[nr].Min, minmax[nr].Max
	}
	nrs, omitted := top(all.Top(0, p.keep), p.o.top)
	rows := p.tr.Rows(all, nrs)
	tasks, tasksOmitted := top(p.sortTasks(tasks), p.o.top)
	reported, dropped := p.reported, p.tr.Drops()
	if p.o.json {
		t := p.jsonTable("summary", time.Now(), elapsed, rows, tasks)
		t.SyscallsOmitted, t.TasksOmitted = omitted, tasksOmitted
		t.SlowReported, t.Dropped = &reported, &dropped
		if withCmd {
			t.ExitStatus = &status
		}
		p.writeJSON(t)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n=== summary: %v ===\n", elapsed.Round(time.Millisecond))
	tracker.WriteTable(&b, rows, p.o.unit)
	writeOmitted(&b, omitted, "syscall")
	p.writeTasks(&b, tasks, tasksOmitted)
	if p.o.hist {
		for _, nr := range nrs {
			tracker.WriteHistogram(&b, tracker.SyscallName(nr), &all[nr])
		}
	}
	fmt.Fprintf(&b, "\n%s reported, %d dropped\n", tracker.Plural(reported, "slow call"), dropped)
	io.WriteString(p.w, b.String())
}

// top returns the first n rows (n 0: all) and how many it left out.
func top[T any](rows []T, n int) ([]T, int) {
	if n > 0 && len(rows) > n {
		return rows[:n], len(rows) - n
	}
	return rows, 0
}

// writeOmitted says how many rows --top left out of a table.
func writeOmitted(b *strings.Builder, n int, what string) {
	if n == 1 {
		fmt.Fprintf(b, "... and 1 more %s (--top 0 shows all)\n", what)
	} else if n > 1 {
		fmt.Fprintf(b, "... and %d more %ss (--top 0 shows all)\n", n, what)
	}
}

func (p *printer) jsonTable(typ string, now time.Time, span time.Duration, rows []tracker.Row, tasks []tracker.TaskStats) jsonTable {
	t := jsonTable{Type: typ, Time: now.UTC().Format(time.RFC3339Nano), IntervalNs: int64(span), Syscalls: []jsonRow{}}
	for _, r := range rows {
		s := &r.Stats
		p50lo, p50hi := s.PercentileRange(50)
		p99lo, p99hi := s.PercentileRange(99)
		t.Syscalls = append(t.Syscalls, jsonRow{
			Syscall: tracker.SyscallName(r.Syscall), Calls: s.Count, Slow: s.Slow,
			MinNs: int64(s.Min), MeanNs: int64(s.Mean()), MaxNs: int64(s.Max),
			P50Ns: [2]int64{int64(p50lo), int64(p50hi)}, P99Ns: [2]int64{int64(p99lo), int64(p99hi)},
			ThresholdNs: int64(r.Threshold),
		})
	}
	if p.o.cfg.GroupBy != tracker.GroupNone {
		t.TasksBy = p.taskWord()
	}
	for _, ts := range tasks {
		t.Tasks = append(t.Tasks, jsonTask{
			ID: ts.ID, Comm: ts.Comm, Syscall: tracker.SyscallName(ts.Syscall), Calls: ts.Count, Slow: ts.Slow,
			MeanNs: int64(ts.Sum) / int64(max(ts.Count, 1)), MaxNs: int64(ts.Max),
		})
	}
	return t
}

func (p *printer) taskWord() string {
	if p.o.cfg.GroupBy == tracker.GroupThread {
		return "thread"
	}
	return "process"
}

// sortTasks keeps the -e syscalls' rows with calls, most calls first.
func (p *printer) sortTasks(tasks []tracker.TaskStats) []tracker.TaskStats {
	var out []tracker.TaskStats
	for _, t := range tasks {
		if t.Count > 0 && p.keep(t.Syscall) {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func (p *printer) writeTasks(b *strings.Builder, tasks []tracker.TaskStats, omitted int) {
	if p.o.cfg.GroupBy == tracker.GroupNone {
		return
	}
	id := "PID"
	if p.o.cfg.GroupBy == tracker.GroupThread {
		id = "TID"
	}
	u := p.o.unit
	sfx := map[tracker.Unit]string{tracker.Microseconds: "(µs)", tracker.Milliseconds: "(ms)"}[u]
	fmt.Fprintf(b, "\n%7s %-16s %-18s %9s %6s %9s %12s\n", id, "COMM", "SYSCALL", "CALLS", "SLOW", "MEAN"+sfx, "MAX(run)"+sfx)
	for _, t := range tasks {
		fmt.Fprintf(b, "%7d %-16s %-18s %9d %6d %9s %12s\n", t.ID, t.Comm, tracker.SyscallName(t.Syscall), t.Count, t.Slow,
			tracker.FormatDuration(t.Sum/time.Duration(max(t.Count, 1)), u), tracker.FormatDuration(t.Max, u))
	}
	writeOmitted(b, omitted, "row")
}

// taskDelta returns cur's counts minus prev's (Max stays cur's: since
// start).
func taskDelta(cur, prev []tracker.TaskStats) []tracker.TaskStats {
	type key struct{ id, nr uint32 }
	before := make(map[key]tracker.TaskStats, len(prev))
	for _, t := range prev {
		before[key{t.ID, t.Syscall}] = t
	}
	out := make([]tracker.TaskStats, 0, len(cur))
	for _, t := range cur {
		if b, ok := before[key{t.ID, t.Syscall}]; ok && b.Count <= t.Count {
			t.Count -= b.Count
			t.Slow -= min(t.Slow, b.Slow)
			t.Sum -= min(t.Sum, b.Sum)
		}
		out = append(out, t)
	}
	return out
}
