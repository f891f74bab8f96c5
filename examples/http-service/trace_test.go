package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uebpf/uebpf/control"
)

// The end-to-end tests of run-time control: the service runs as its own
// process with --control, and the uebpf command, another process, drives
// it as a user would from a second terminal (README.md), directly or
// through "uebpf trace --stdio" (the transport of --ssh), on this
// machine's architecture and as an arm64 build under qemu-aarch64.

// e2eFilter keeps the failed requests and the slow ones; it decides by
// path rather than by time alone, so that a fast request slowed by a
// loaded machine (or by qemu) cannot match.
const e2eFilter = `status >= 500 || (path == "/slow" && duration_us > 20000)`

// builds holds the binaries the tests build, once per test binary.
var builds struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// build builds package pkg for goarch into a temporary directory shared by
// the tests, once.
func build(t *testing.T, pkg, goarch string) string {
	t.Helper()
	builds.Lock()
	defer builds.Unlock()
	key := pkg + " " + goarch
	if bin := builds.bins[key]; bin != "" {
		return bin
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "uebpf-e2e-")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil { // the other uid runs them
			t.Fatal(err)
		}
		builds.dir, builds.bins = dir, map[string]string{}
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(builds.dir, filepath.Base(pkg)+"-"+goarch)
	cmd := exec.Command(gobin, "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s for %s: %v\n%s", pkg, goarch, err, out)
	}
	builds.bins[key] = bin
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// service is the example running as a process with --control.
type service struct {
	pid    int
	socket string
	base   string // http://addr
}

// startService runs the service (argv: its command line before the
// flags) and waits for its socket and address.
func startService(t *testing.T, argv ...string) *service {
	t.Helper()
	cmd := exec.Command(argv[0], append(argv[1:], "--control", "--addr", "127.0.0.1:0")...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	s := &service{pid: cmd.Process.Pid}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(2 * time.Minute) // qemu starts slowly on a loaded machine
	for s.socket == "" || s.base == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("service exited before serving:\n%s", stderr.String())
			}
			if p, ok := strings.CutPrefix(l, "control socket "); ok {
				s.socket = p
			}
			if a, ok := strings.CutPrefix(l, "serving on "); ok {
				s.base = "http://" + a
			}
		case <-timeout:
			t.Fatalf("service did not start:\n%s", stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s
}

// get sends requests for paths, one after the other.
func (s *service) get(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		resp, err := http.Get(s.base + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// cli runs the uebpf command as another process.
type cli struct {
	bin    string
	target []string // --pid/--socket and the transport flags
	cred   *syscall.Credential
}

func (c cli) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := args
	if args[1] != "ps" { // the one trace command without a target
		full = append(append(slices.Clone(args[:2]), c.target...), args[2:]...)
	}
	cmd := exec.CommandContext(ctx, c.bin, full...)
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("uebpf %s: %v", strings.Join(full, " "), err)
	}
	return out.String(), errb.String(), code
}

// ok runs the command and fails the test unless it exits 0.
func (c cli) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := c.run(t, args...)
	if code != 0 {
		t.Fatalf("uebpf %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// stats reads the counters of http:request_done and of the sessions.
func (c cli) stats(t *testing.T) (control.Stats, []control.SessionInfo) {
	t.Helper()
	var r struct {
		Tracepoints []control.TracepointInfo `json:"tracepoints"`
		Sessions    []control.SessionInfo    `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(c.ok(t, "trace", "stats", "--json", "http:request_done")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tracepoints) != 1 {
		t.Fatalf("stats: tracepoints %+v, want http:request_done", r.Tracepoints)
	}
	return r.Tracepoints[0].Stats, r.Sessions
}

// TestTraceCLI drives the service from the uebpf command: list, enable
// with a filter, stream (JSON and text), stats, disable, and a trace
// recorded for babeltrace2; then the same, but from another uid.
func TestTraceCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	uebpf := build(t, "github.com/uebpf/uebpf/cmd/uebpf", runtime.GOARCH)
	svc := startService(t, build(t, "github.com/uebpf/uebpf/examples/http-service", runtime.GOARCH))
	c := cli{bin: uebpf, target: []string{"--pid", fmt.Sprint(svc.pid)}}
	t.Run("ps", func(t *testing.T) {
		out := c.ok(t, "trace", "ps")
		if !strings.Contains(out, fmt.Sprintf("%d  http-service-", svc.pid)) || !strings.Contains(out, svc.socket) {
			t.Errorf("trace ps does not list the service (pid %d, %s):\n%s", svc.pid, svc.socket, out)
		}
	})
	t.Run("direct", func(t *testing.T) { controlScenario(t, c, svc) })
	t.Run("stdio", func(t *testing.T) {
		// What --ssh HOST runs, without ssh: "uebpf trace --stdio" started
		// by the CLI, carrying the connection over its stdin and stdout.
		c := c
		c.target = append([]string{"--remote", uebpf}, c.target...)
		controlScenario(t, c, svc)
	})
	t.Run("record", func(t *testing.T) { recordScenario(t, c, svc) })
	t.Run("other-uid", func(t *testing.T) { otherUIDScenario(t, c, svc) })
}

// TestTraceCLIArm64 runs the service built for arm64 under qemu-aarch64,
// driven by this machine's CLI through the arm64 build of "uebpf trace
// --stdio": a workstation tracing an application on an arm64 board.
func TestTraceCLIArm64(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH == "arm64" {
		t.Skip("tests an arm64 build under qemu on another Linux architecture")
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static is not installed (Debian package qemu-user-static)")
	}
	if testing.Short() {
		t.Skip("-short: the arm64 builds take a while")
	}
	uebpf := build(t, "github.com/uebpf/uebpf/cmd/uebpf", runtime.GOARCH)
	remote := build(t, "github.com/uebpf/uebpf/cmd/uebpf", "arm64")
	svc := startService(t, qemu, build(t, "github.com/uebpf/uebpf/examples/http-service", "arm64"))
	c := cli{bin: uebpf, target: []string{"--remote", qemu + " " + remote, "--pid", fmt.Sprint(svc.pid)}}
	controlScenario(t, c, svc)
}

// controlScenario enables the filter, fires known requests and checks
// that exactly the matching events arrive, as JSON and as text, that the
// counters agree, and that disabling stops the recording.
func controlScenario(t *testing.T, c cli, svc *service) {
	var list control.TracepointInfo
	for l := range strings.Lines(c.ok(t, "trace", "list", "--json", "http:*")) {
		var tp control.TracepointInfo
		if err := json.Unmarshal([]byte(l), &tp); err != nil {
			t.Fatal(err)
		}
		if tp.Name == "http:request_done" {
			list = tp
		}
	}
	if len(list.Fields) != 5 || list.Fields[2].Name != "status" || list.Fields[2].Type != "u16" {
		t.Fatalf("trace list: http:request_done is %+v", list)
	}
	before, _ := c.stats(t)

	// A filter that does not compile is refused with its column, exit 2.
	if _, errs, code := c.run(t, "trace", "enable", "http:request_done", "--filter", "status >="); code != 2 || !strings.Contains(errs, "column ") {
		t.Errorf("a broken filter: exit %d, %q; want 2 and its column", code, errs)
	}

	var sess control.SessionInfo
	if err := json.Unmarshal([]byte(c.ok(t, "trace", "enable", "--json", "http:request_done", "--filter", e2eFilter)), &sess); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(sess.ID)
	svc.get(t, "/ok", "/fail", "/missing", "/slow", "/ok", "/fail")

	// JSON: the three matching events, in order, with their fields.
	out := c.ok(t, "trace", "stream", "--session", id, "--json", "--count", "3", "--duration", "1m")
	var got []string
	for l := range strings.Lines(out) {
		var ev control.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		if ev.Tracepoint != "http:request_done" || ev.Vpid != int64(svc.pid) || ev.Fields.Get("method") != "GET" {
			t.Errorf("event %+v", ev)
		}
		got = append(got, fmt.Sprintf("%v %v", ev.Fields.Get("path"), ev.Fields.Get("status")))
	}
	if want := []string{"/fail 500", "/slow 200", "/fail 500"}; !slices.Equal(got, want) {
		t.Errorf("streamed %q, want %q", got, want)
	}
	// Nothing else was recorded.
	if out, errs := c.ok(t, "trace", "stream", "--session", id, "--duration", "300ms"), ""; out != "" {
		t.Errorf("a second stream got events:\n%s%s", out, errs)
	}

	// Text, as lttng view prints events.
	svc.get(t, "/ok", "/fail")
	out = c.ok(t, "trace", "stream", "--count", "1", "--duration", "1m")
	if !strings.Contains(out, `http:request_done: { vpid = `+fmt.Sprint(svc.pid)) || !strings.Contains(out, `{ method = "GET", path = "/fail", status = 500, duration_us = `) {
		t.Errorf("text stream:\n%s", out)
	}

	tp, sessions := c.stats(t)
	fired := tp.Fired - before.Fired
	if fired != 8 || tp.Matched-before.Matched != 4 || tp.Recorded-before.Recorded != 4 || tp.Dropped != before.Dropped {
		t.Errorf("tracepoint counters %+v (before %+v): want 8 more fired, 4 more matched and recorded, none dropped", tp, before)
	}
	if len(sessions) != 1 || sessions[0].ID != sess.ID || sessions[0].Stats.Recorded != 4 || sessions[0].Stats.Dropped != 0 {
		t.Errorf("sessions %+v: want session %d with 4 recorded", sessions, sess.ID)
	}

	// Disable: the session is gone and nothing counts any more.
	c.ok(t, "trace", "disable", id)
	svc.get(t, "/fail", "/slow")
	after, sessions := c.stats(t)
	if len(sessions) != 0 || after != tp {
		t.Errorf("after disable: sessions %+v, counters %+v (were %+v)", sessions, after, tp)
	}
	if _, errs, code := c.run(t, "trace", "stream", "--duration", "100ms"); code != 2 || !strings.Contains(errs, "no session") {
		t.Errorf("stream with no session: exit %d, %q", code, errs)
	}
}

// recordScenario records a trace through the CLI while requests are
// sent, and reads it back with babeltrace2.
func recordScenario(t *testing.T, c cli, svc *service) {
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Skip("babeltrace2 is not installed (Debian package babeltrace2)")
	}
	dir := filepath.Join(t.TempDir(), "trace")
	args := append(append([]string{"trace", "record"}, c.target...), "--output", dir, "http:request_done", "--filter", e2eFilter)
	rec := exec.Command(c.bin, args...)
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for its session, then fire.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, sessions := c.stats(t); len(sessions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			rec.Process.Kill()
			t.Fatalf("trace record started no session:\n%s", stderr.String())
		}
	}
	svc.get(t, "/fail", "/ok", "/slow", "/missing", "/fail")
	time.Sleep(200 * time.Millisecond)
	rec.Process.Signal(os.Interrupt)
	if err := rec.Wait(); err != nil {
		t.Fatalf("trace record: %v\n%s", err, stderr.String())
	}
	out, err := exec.Command(bt, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2: %v\n%s", err, out)
	}
	var got []string
	for l := range strings.Lines(string(out)) {
		if !strings.Contains(l, "http:request_done:") {
			t.Errorf("babeltrace2 line %q", l)
		}
		_, fields, _ := strings.Cut(l, `path = "`)
		path, _, _ := strings.Cut(fields, `"`)
		_, status, _ := strings.Cut(l, "status = ")
		status, _, _ = strings.Cut(status, ",")
		got = append(got, path+" "+status)
	}
	if want := []string{"/fail 500", "/slow 200", "/fail 500"}; !slices.Equal(got, want) {
		t.Errorf("babeltrace2 read %q, want %q:\n%s", got, want, out)
	}
	if _, sessions := c.stats(t); len(sessions) != 0 {
		t.Errorf("trace record left its session: %+v", sessions)
	}
}

// otherUIDScenario: a user other than the service's own and root is
// refused, by the socket's file modes and, with those opened, by
// SO_PEERCRED.
func otherUIDScenario(t *testing.T, c cli, svc *service) {
	if os.Getuid() != 0 {
		t.Skip("not root: cannot run the CLI as another uid")
	}
	nobody := cli{bin: c.bin, target: []string{"--socket", svc.socket}, cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, errs, code := nobody.run(t, "trace", "list"); code != 1 || !strings.Contains(errs, "permission denied") {
		t.Errorf("uid 65534 through the file modes: exit %d\n%s%s", code, out, errs)
	}
	// Open the modes: now SO_PEERCRED refuses it.
	for _, dir := range []string{filepath.Dir(svc.socket)} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
	}
	if err := os.Chmod(svc.socket, 0o666); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(svc.socket, 0o600)
	if out, errs, code := nobody.run(t, "trace", "list"); code != 2 || !strings.Contains(errs, "denied") || strings.Contains(errs, "permission denied") {
		t.Errorf("uid 65534 past the file modes: exit %d\n%s%s", code, out, errs)
	}
	// The owner still gets in.
	c.ok(t, "trace", "list")
}
