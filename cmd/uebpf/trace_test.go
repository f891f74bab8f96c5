package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/control"
	"github.com/uebpf/uebpf/tracepoint"
)

// The end-to-end tests of the trace commands against a separate process
// are examples/http-service's (trace_test.go); these check the command
// line and the ssh transport against a server in the test process.

type testEvent struct {
	Code  uint32
	Label [12]byte
}

var testPoint = tracepoint.New[testEvent]("clitest", "event")

// serve starts a control server on a socket whose path needs quoting in a
// shell.
func serve(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	path := filepath.Join(t.TempDir(), "it's a dir", "ctl.sock")
	srv, err := control.Listen(ctx, &control.Options{Path: path})
	if errors.Is(err, control.ErrUnsupported) {
		t.Skip("no control socket on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Path()
}

func TestTraceErrors(t *testing.T) {
	sock := serve(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"trace", "list"}, 2, "say which application: --pid PID or --socket PATH"},
		{[]string{"trace", "list", "--pid", "1", "--socket", sock}, 2, "--pid and --socket exclude each other"},
		{[]string{"trace", "list", "--pid", "-3"}, 2, "--pid -3: want a process id"},
		{[]string{"trace", "list", "--socket", sock, "--ssh", "h", "--remote", "x"}, 2, "--ssh and --remote exclude each other"},
		{[]string{"trace", "list", "--socket", sock + ".missing"}, 1, "no such file or directory"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event"}, 2, "say what to attach"},
		{[]string{"trace", "enable", "--socket", sock, "--filter", "code == 1"}, 2, "a filter needs a TRACEPOINT"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event", "--filter", "code == 1", "--object", "x.o"}, 2, "exclude each other"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event", "--filter", "nope == 1"}, 2, "column 1"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event", "--filter", "label < \"a*\""}, 2, "column"},
		{[]string{"trace", "enable", "--socket", sock, "no:such", "--filter", "x == 1"}, 2, "no:such"},
		{[]string{"trace", "disable", "--socket", sock}, 2, "want one SESSION"},
		{[]string{"trace", "disable", "--socket", sock, "x"}, 2, `session "x": want a session id`},
		{[]string{"trace", "disable", "--socket", sock, "99"}, 2, "no session 99"},
		{[]string{"trace", "stream", "--socket", sock}, 2, "no session"},
		{[]string{"trace", "stream", "--socket", sock, "--session", "7"}, 2, "no session 7"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event", "--filter", "code == 1", "--mode", "sometimes"}, 2, "want discard, overwrite or block"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event", "--filter", "code == 1", "--mode", "overwrite:1s"}, 2, "a timeout goes with block only"},
		{[]string{"trace", "enable", "--socket", sock, "clitest:event", "--filter", "code == 1", "--mode", "block:soon"}, 2, "block:DURATION"},
		{[]string{"trace", "snapshot", "--socket", sock}, 2, "want --session ID and --output DIR"},
		{[]string{"trace", "recover"}, 2, "want one FILE"},
		{[]string{"trace", "recover", "/nonexistent/ring"}, 2, "--output DIR is needed"},
		{[]string{"trace", "record", "--socket", sock}, 2, "--output DIR is needed"},
		{[]string{"trace", "record", "--socket", sock, "--output", "d"}, 2, "say what to record"},
		{[]string{"trace", "record", "--socket", sock, "--output", "d", "clitest:event"}, 2, "TRACEPOINT and --filter go together"},
		{[]string{"trace", "ps", "x"}, 2, "takes no arguments"},
		{[]string{"trace", "--stdio"}, 2, "say which application"},
		{[]string{"trace"}, 2, "want one of: list, enable, disable, stream, stats, record, snapshot, recover, map, ps, stdio"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, tt.code, tt.want, stdout, stderr)
			}
		})
	}
}

// TestTraceSSH runs the trace commands through --ssh with an ssh that
// runs the remote command in a local shell, as sshd does: the arguments
// must survive the remote shell (the socket path has a quote and a space).
func TestTraceSSH(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	sock := serve(t)
	bin := t.TempDir()
	fake := "#!/bin/sh\n" +
		"while [ \"$1\" != -- ]; do shift; done\n" +
		"shift; echo \"$1\" > \"$FAKE_SSH_HOST\"; shift\n" +
		"exec sh -c \"$*\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SSH_HOST", filepath.Join(bin, "host"))
	t.Setenv(asCommandEnv, "1") // the test binary is the remote uebpf
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	remote := []string{"--ssh", "me@board", "--ssh-uebpf", self, "--socket", sock}

	code, out, errs := runCLI(t, "", append([]string{"trace", "list"}, remote...)...)
	if code != 0 || !strings.Contains(out, "clitest:event { code:u32, label:string[12] }") {
		t.Fatalf("trace list --ssh: exit %d\n%s%s", code, out, errs)
	}
	if host, _ := os.ReadFile(filepath.Join(bin, "host")); string(host) != "me@board\n" {
		t.Errorf("ssh got host %q", host)
	}
	code, out, errs = runCLI(t, "", append([]string{"trace", "enable", "clitest:event", "--filter", `label == "b*" && code > 1`}, remote...)...)
	if code != 0 || !strings.Contains(out, "session 1: attachment ") || !strings.HasPrefix(out, "session 1: 1") {
		t.Fatalf("trace enable --ssh: exit %d\n%s%s", code, out, errs)
	}
	for i, label := range []string{"a", "bx", "by", "b"} {
		var ev testEvent
		ev.Code = uint32(i)
		copy(ev.Label[:], label)
		testPoint.Fire(&ev)
	}
	code, out, errs = runCLI(t, "", append([]string{"trace", "stream", "--json", "--count", "2", "--duration", "1m"}, remote...)...)
	want := `{"tp":"clitest:event",` // then the context, then the fields:
	if code != 0 || strings.Count(out, want) != 2 || !strings.Contains(out, `"fields":{"code":3,"label":"b"}}`) || !strings.Contains(out, `"fields":{"code":2,"label":"by"}}`) {
		t.Errorf("trace stream --ssh: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, "", append([]string{"trace", "disable", "--all"}, remote...)...); code != 0 {
		t.Errorf("trace disable --ssh: exit %d\n%s%s", code, out, errs)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"uebpf":           "uebpf",
		"/usr/bin/uebpf":  "/usr/bin/uebpf",
		"a b":             "'a b'",
		"it's":            `'it'\''s'`,
		"":                "''",
		"$HOME;rm -rf /x": "'$HOME;rm -rf /x'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

type testSyscallExit struct {
	Pid       uint32
	Syscall   uint32
	LatencyNs uint64
}

var testSyscalls = tracepoint.New[testSyscallExit]("clitest", "syscall_exit")

// trace map reads, writes and deletes the entries of a map of a
// session's object: the counts a program keeps, the thresholds it reads.
func TestTraceMap(t *testing.T) {
	sock := serve(t)
	target := []string{"--socket", sock}
	cli := func(want int, args ...string) string {
		t.Helper()
		full := append(append(args[:2:2], target...), args[2:]...)
		code, out, errs := runCLI(t, "", full...)
		if code != want {
			t.Fatalf("uebpf %s: exit %d, want %d\n%s%s", strings.Join(full, " "), code, want, out, errs)
		}
		return out + errs
	}
	out := cli(0, "trace", "enable", "clitest:syscall_exit", "--object", "../../examples/filter/filter.bpf.o", "--program", "count_slow")
	if !strings.HasPrefix(out, "session ") {
		t.Fatalf("enable: %s", out)
	}
	session := strings.Fields(out)[1]
	session = strings.TrimSuffix(session, ":")
	for _, ev := range []testSyscallExit{{7, 1, 5e6}, {7, 2, 10}, {9, 1, 2e6}, {7, 3, 3e6}} {
		testSyscalls.Fire(&ev)
	}
	if out := cli(0, "trace", "map", "--session", session, "slow_calls"); out != "07000000 0200000000000000\n09000000 0100000000000000\n" &&
		out != "09000000 0100000000000000\n07000000 0200000000000000\n" {
		t.Errorf("dump:\n%s", out)
	}
	if out := cli(0, "trace", "map", "--session", session, "slow_calls", "07000000"); out != "07000000 0200000000000000\n" {
		t.Errorf("lookup: %q", out)
	}
	cli(0, "trace", "map", "--session", session, "slow_calls", "07000000", "2a00000000000000")
	if out := cli(0, "trace", "map", "--json", "--session", session, "slow_calls", "07000000"); out != `{"key":"07000000","value":"2a00000000000000"}`+"\n" {
		t.Errorf("lookup after update: %q", out)
	}
	cli(2, "trace", "map", "--session", session, "slow_calls", "0b000000", "01", "--flags", "exist")
	cli(0, "trace", "map", "--session", session, "--delete", "slow_calls", "07000000")
	if out := cli(2, "trace", "map", "--session", session, "slow_calls", "07000000"); !strings.Contains(out, "not") {
		t.Errorf("lookup after delete: %q", out)
	}
	cli(2, "trace", "map", "--session", session, "slow_calls", "zz")
	cli(2, "trace", "map", "slow_calls")
	cli(2, "trace", "map", "--session", session, "slow_calls", "07000000", "--flags", "sometimes")
	cli(2, "trace", "map", "--session", session, "no_such_map")
	cli(0, "trace", "disable", "--all")
}

// TestTraceOutputs: enable and disable say what they did; a stream of
// several sessions says each event's session; JSON's "ts" is the wall
// time the text shows; help trace documents the exit statuses.
func TestTraceOutputs(t *testing.T) {
	sock := serve(t)
	cli := func(args ...string) (string, string) {
		t.Helper()
		full := append(append(args[:2:2], "--socket", sock), args[2:]...)
		code, out, errs := runCLI(t, "", full...)
		if code != 0 {
			t.Fatalf("uebpf %s: exit %d\n%s%s", strings.Join(full, " "), code, out, errs)
		}
		return out, errs
	}
	out, _ := cli("trace", "enable", "clitest:event", "--filter", "code == 1", "--buffer-size", "100", "--mode", "overwrite")
	if !strings.HasPrefix(out, "session 1: ") || !strings.Contains(out, "overwrite mode") || strings.Contains(out, " 100 bytes") {
		t.Errorf("enable says:\n%s", out)
	}
	cli("trace", "enable", "clitest:event", "--filter", "code == 2", "--mode", "block:50ms")
	for _, code := range []uint32{1, 2} {
		ev := testEvent{Code: code}
		copy(ev.Label[:], "x")
		testPoint.Fire(&ev)
	}
	text, _ := cli("trace", "stream", "--count", "2", "--duration", "1m")
	js, _ := cli("trace", "stream", "--count", "0", "--duration", "10ms", "--json")
	if js != "" {
		t.Errorf("the events were printed already, and again:\n%s", js)
	}
	for _, want := range []string{"session 1 clitest:event", "session 3 clitest:event"} {
		if !strings.Contains(text, want) {
			t.Errorf("a stream of two sessions lacks %q:\n%s", want, text)
		}
	}
	// The same events as JSON and as text: the same wall time.
	ev := testEvent{Code: 1}
	testPoint.Fire(&ev)
	js, _ = cli("trace", "stream", "--session", "1", "--count", "1", "--duration", "1m", "--json")
	var e control.Event
	if err := json.Unmarshal([]byte(js), &e); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js, `"vtid"`) || strings.Contains(js, `"goid"`) || e.Session != 1 && strings.Contains(js, `"session"`) {
		t.Errorf("JSON has context fields not collected, or a session alone: %s", js)
	}
	if d := time.Since(time.Unix(0, e.Time)); d < 0 || d > time.Minute {
		t.Errorf("JSON ts %d is %v from now: not the wall time", e.Time, d)
	}
	out, _ = cli("trace", "disable", "1")
	if !strings.Contains(out, "disabled session 1 (1 attachments)") || !strings.Contains(out, `attachment 2: clitest:event: filter "code == 1"`) {
		t.Errorf("disable says:\n%s", out)
	}
	code, help, _ := runCLI(t, "", "help", "trace")
	if code != 0 || !strings.Contains(help, "exits with status 0") || !strings.Contains(help, "2 for a usage error or\na request the application refused") {
		t.Errorf("help trace:\n%s", help)
	}
}

// TestRemoteNotFound: an ssh host without uebpf gets the flag to name it.
func TestRemoteNotFound(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'sh: 1: uebpf: not found' >&2\nexit 127\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, args := range [][]string{{"trace", "list", "--ssh", "h", "--pid", "1"}, {"trace", "ps", "--ssh", "h"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != 1 || !strings.Contains(errs, "give its path with --ssh-uebpf") {
			t.Errorf("uebpf %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	code, _, errs := runCLI(t, "", "trace", "ps", "--remote", "/nonexistent/uebpf")
	if code != 1 || !strings.Contains(errs, "nonexistent") {
		t.Errorf("trace ps --remote: exit %d %s", code, errs)
	}
}
