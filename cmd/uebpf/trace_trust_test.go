package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/uebpf/uebpf/control"
)

// syncLog is a server's log, written by its goroutines.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// trace --pid P reaches the server that is process P, and no other: a
// server answering on a socket named by another pid (init's) is neither
// listed by trace ps nor spoken to by trace list or trace --stdio.
func TestTracePIDMustMatch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", "")
	dir := filepath.Join(tmp, "uebpf-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	listen := func(name string) (string, *syncLog) {
		log := &syncLog{}
		path := filepath.Join(dir, name)
		srv, err := control.Listen(context.Background(), &control.Options{Path: path,
			Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return path, log
	}
	mine, _ := listen(strconv.Itoa(os.Getpid()) + ".sock")
	wrong, wrongLog := listen("1.sock")

	code, out, errs := runCLI(t, "", "trace", "ps")
	comm, _ := os.ReadFile("/proc/self/comm")
	want := fmt.Sprintf("\n%d\t%s\t%d\t%s\n", os.Getpid(), bytes.TrimSpace(comm), os.Getuid(), mine)
	if code != 0 || !strings.Contains(tabs(out), want) || strings.Contains(out, wrong) {
		t.Errorf("trace ps: exit %d, want a line %q and not %s:\n%s%s", code, want, wrong, out, errs)
	}
	if code, out, errs := runCLI(t, "", "trace", "list", "--pid", strconv.Itoa(os.Getpid())); code != 0 || !strings.Contains(out, "clitest:event") {
		t.Errorf("trace list --pid %d: exit %d\n%s%s", os.Getpid(), code, out, errs)
	}
	for _, args := range [][]string{{"trace", "list", "--pid", "1"}, {"trace", "--stdio", "--pid", "1"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != 1 || out != "" {
			t.Errorf("%s: exit %d, want 1\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		t.Logf("%s: %s", strings.Join(args, " "), strings.TrimSpace(errs))
	}
	if strings.Contains(wrongLog.String(), "client connected") {
		t.Errorf("the server at %s, not pid 1, was spoken to:\n%s", wrong, wrongLog.String())
	}
}

// tabs turns the columns of tabwriter's output into single tabs.
func tabs(s string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString(strings.Join(strings.Fields(l), "\t") + "\n")
	}
	return b.String()
}
