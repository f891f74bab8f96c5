package tracker

import (
	"reflect"
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
