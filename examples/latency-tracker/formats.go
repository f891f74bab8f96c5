//go:build linux

package tracker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The tracepoint programs read their arguments at fixed offsets (struct
// newtask_args and struct exec_args in tracker.bpf.c). These have not
// changed since Linux 3.x, but a kernel that moved one would make the
// programs read the wrong field silently, so New compares them with the
// kernel's format files where tracefs is mounted.
var tracepointFields = []struct {
	event  string
	fields map[string]int // field name: offset
}{
	{"task/task_newtask", map[string]int{"pid": 8, "clone_flags": 32}},
	{"sched/sched_process_exec", map[string]int{"pid": 12, "old_pid": 16}},
}

// hasGroupDead reports whether sched_process_exit has the group_dead
// field (Linux 6.16 on) where the program reads it.
func hasGroupDead() bool {
	for _, root := range tracefsRoots {
		b, err := os.ReadFile(root + "/events/sched/sched_process_exit/format")
		if err == nil {
			off, ok := parseFormat(string(b))["group_dead"]
			return ok && off == 32
		}
	}
	return false
}

var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// checkTracepointFormats returns an error naming the first field whose
// offset differs from the programs'; nil when they agree or tracefs is
// not readable.
func checkTracepointFormats() error {
	for _, tp := range tracepointFields {
		var format []byte
		for _, root := range tracefsRoots {
			b, err := os.ReadFile(root + "/events/" + tp.event + "/format")
			if err == nil {
				format = b
				break
			}
		}
		if format == nil {
			continue
		}
		got := parseFormat(string(format))
		for name, want := range tp.fields {
			off, ok := got[name]
			if !ok {
				return fmt.Errorf("tracker: tracepoint %s has no field %s: %w", tp.event, name, errFormat)
			}
			if off != want {
				return fmt.Errorf("tracker: tracepoint %s: field %s at offset %d, the program reads offset %d: %w", tp.event, name, off, want, errFormat)
			}
		}
	}
	return nil
}

var errFormat = errors.New("this kernel's tracepoint format is not the one the tracker was built for")

// parseFormat returns the offsets of the fields of a tracepoint format
// file ("\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;").
func parseFormat(format string) map[string]int {
	offsets := map[string]int{}
	for _, line := range strings.Split(format, "\n") {
		var decl, off string
		for _, part := range strings.Split(strings.TrimSpace(line), ";") {
			part = strings.TrimSpace(part)
			if v, ok := strings.CutPrefix(part, "field:"); ok {
				decl = v
			} else if v, ok := strings.CutPrefix(part, "offset:"); ok {
				off = v
			}
		}
		if decl == "" || off == "" {
			continue
		}
		f := strings.Fields(decl)
		name := f[len(f)-1]
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		if n, err := strconv.Atoi(off); err == nil {
			offsets[name] = n
		}
	}
	return offsets
}
