//go:build linux

package tracker

import (
	"errors"
	"os/exec"
	"reflect"
	"sync/atomic"
	"testing"
)

func TestParseFormat(t *testing.T) {
	const format = `name: task_newtask
ID: 205
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:pid_t pid;	offset:8;	size:4;	signed:1;
	field:char comm[16];	offset:12;	size:16;	signed:0;
	field:u64 clone_flags;	offset:32;	size:8;	signed:0;

print fmt: "pid=%d comm=%s", REC->pid, REC->comm
`
	want := map[string]int{"common_type": 0, "common_pid": 4, "pid": 8, "comm": 12, "clone_flags": 32}
	if got := parseFormat(format); !reflect.DeepEqual(got, want) {
		t.Errorf("parseFormat = %v, want %v", got, want)
	}
}

// The running kernel's formats, where readable, are the programs'.
func TestTracepointFormats(t *testing.T) {
	if err := checkTracepointFormats(); err != nil {
		t.Error(err)
	}
}

// When a tracked process ends, the kernel program clears its flags (by
// group_dead where the kernel has it), so a reused pid starts untracked.
func TestProcessFlagsClearedOnExit(t *testing.T) {
	tr, err := New(Config{})
	if errors.Is(err, ErrPermission) {
		t.Skip("kernel BPF not available (needs root or CAP_BPF+CAP_PERFMON)")
	}
	if errors.Is(err, ErrNoTracefs) {
		t.Skip("tracefs is not mounted: the tracker's tracepoints cannot be attached")
	}
	if errors.Is(err, ErrNoBTF) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	cmd := exec.Command("sleep", "0.1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := tr.TrackProcess(pid, true); err != nil {
		t.Fatal(err)
	}
	bit := func(bm int) bool { return atomic.LoadUint64(tr.word(bm*idWords+pid>>6))>>(pid&63)&1 == 1 }
	if !bit(bmThreads) || !bit(bmFollow) || !bit(bmThread) {
		t.Fatalf("process %d not marked", pid)
	}
	cmd.Wait()
	for _, bm := range []int{bmThread, bmThreads, bmFollow} {
		if bit(bm) {
			t.Errorf("bitmap %d: process %d still marked after it exited (group_dead read: %v)", bm, pid, hasGroupDead())
		}
	}
}
