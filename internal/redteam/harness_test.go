package redteam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// caseEnv names the case a child process runs.
const caseEnv = "UEBPF_REDTEAM_CASE"

// childTimeout bounds a child process: a case that hangs fails.
const childTimeout = 60 * time.Second

const resultPrefix = "REDTEAM-RESULT "

// long reports whether long cases run (UEBPF_LONG=1, not -short).
func long() bool { return os.Getenv("UEBPF_LONG") == "1" && !testing.Short() }

// noSkip makes known-failing cases run anyway (UEBPF_REDTEAM_NOSKIP=1),
// to check whether their fix has landed.
func noSkip() bool { return os.Getenv("UEBPF_REDTEAM_NOSKIP") == "1" }

// inChild reports whether this process is a child running some case.
func inChild() bool { return os.Getenv(caseEnv) != "" }

// isolated runs body in a child process, named by t.Name(). In the child
// (UEBPF_REDTEAM_CASE == t.Name()) body runs in-process; a returned error
// fails the case, otherwise the child collects garbage twice and prints a
// result line. In the parent, isolated re-executes the test binary for
// this test only and asserts that the child exited 0 with an "ok" result.
// Other tests and subtests of a child skip themselves.
func isolated(t *testing.T, body func(t *testing.T) (string, error)) {
	t.Helper()
	if name := os.Getenv(caseEnv); name != "" {
		if name != t.Name() {
			t.SkipNow()
		}
		detail, err := body(t)
		runtime.GC()
		runtime.GC()
		if err != nil {
			fmt.Printf("%sFAIL %s: %v\n", resultPrefix, t.Name(), err)
			t.Fatalf("%v", err)
		}
		fmt.Printf("%sok %s: %s\n", resultPrefix, t.Name(), detail)
		return
	}
	out, err := runChild(t, t.Name())
	line := resultLine(out)
	if err != nil || !strings.HasPrefix(line, resultPrefix+"ok ") {
		t.Fatalf("child failed (%v)\n%s", err, summary(out))
	}
	t.Log(strings.TrimPrefix(line, resultPrefix))
}

// runChild runs the case name in a child process and returns its output.
func runChild(_ *testing.T, name string) (string, error) {
	top, _, _ := strings.Cut(name, "/")
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0],
		"-test.run=^"+regexp.QuoteMeta(top)+"$",
		"-test.v=false",
		"-test.timeout="+childTimeout.String(),
	)
	cmd.Env = append(os.Environ(), caseEnv+"="+name)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("child killed after %v: %w", time.Since(start), ctx.Err())
	}
	return string(b), err
}

func resultLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, resultPrefix) {
			return l
		}
	}
	return ""
}

// summary is the start of a child's output (the error and the failing
// goroutine's first frames), without the other goroutines' stacks.
func summary(out string) string {
	if i := strings.Index(out, "\ngoroutine "); i >= 0 {
		if j := strings.Index(out[i+1:], "\n\ngoroutine "); j >= 0 {
			out = out[:i+1+j] + "\n[other goroutines omitted]"
		}
	}
	if len(out) > 4000 {
		out = out[:4000] + "\n[...]"
	}
	return out
}

// knownFailing skips a case whose fix is in progress, unless
// UEBPF_REDTEAM_NOSKIP=1. Skipping happens in the parent only.
func knownFailing(t *testing.T, why string) {
	t.Helper()
	if why != "" && !noSkip() && !inChild() {
		t.Skip("issue 16: fix in progress: " + why)
	}
}

// errIs reports whether err matches any of targets.
func errIs(err error, targets ...error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
