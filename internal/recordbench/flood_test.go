//go:build linux

package recordbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/internal/racebuild"
)

var (
	floodEvents = flag.Int("flood.events", 0, "events per goroutine of TestFloodRecord (default: 10 M in the long suite, 300 k otherwise)")
	floodBuffer = flag.Int("flood.buffer", 64<<20, "the rings of TestFloodRecord's session in all, in bytes")
)

// long says whether the long suites run (UEBPF_LONG=1, as in CI).
func long() bool { return os.Getenv("UEBPF_LONG") == "1" && !testing.Short() }

var bins struct{ dir, app, uebpf string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "recordbench-")
	if err == nil {
		bins.dir = dir
		bins.app, err = goBuild(dir, "./floodapp")
	}
	if err == nil {
		bins.uebpf, err = goBuild(dir, "../../cmd/uebpf")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordbench:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func goBuild(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if racebuild.Enabled {
		args = append(args, "-race")
	}
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append(args, pkg)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// app is a running floodapp.
type app struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	socket string
	done   chan error
}

func startApp(t testing.TB) *app {
	t.Helper()
	a := &app{lines: make(chan string, 16), done: make(chan error, 1)}
	dir, err := os.MkdirTemp("", "floodapp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	a.socket = filepath.Join(dir, "ctl.sock")
	a.cmd = exec.Command(bins.app, "--socket", a.socket)
	a.cmd.Stderr = os.Stderr
	a.stdin, _ = a.cmd.StdinPipe()
	out, _ := a.cmd.StdoutPipe()
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
	}()
	go func() { a.done <- a.cmd.Wait() }()
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		<-a.done
	})
	if l := a.line(t); !strings.HasPrefix(l, "socket ") {
		t.Fatalf("floodapp said %q", l)
	}
	return a
}

func (a *app) line(t testing.TB) string {
	t.Helper()
	select {
	case l, ok := <-a.lines:
		if !ok {
			t.Fatal("floodapp ended")
		}
		return l
	case <-time.After(5 * time.Minute):
		t.Fatal("floodapp said nothing for 5 minutes")
	}
	return ""
}

// report is floodapp's Report.
type report struct {
	Fired, Recorded, Dropped uint64
	Seconds                  float64
}

// flood makes the app fire n events from each of g goroutines, then end
// as then says (exit, quit, kill), and returns its report.
func (a *app) flood(t testing.TB, n, g int, then string) report {
	t.Helper()
	fmt.Fprintf(a.stdin, "go %d %d %s\n", n, g, then)
	var r report
	if err := json.Unmarshal([]byte(a.line(t)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// uebpf runs the uebpf command to its end.
func uebpf(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bins.uebpf, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// background starts the uebpf command, its standard output a pipe read
// into stdout; wait returns what it printed on standard error, its exit
// status and how long it ran (until it exited, not until stdout took what
// it wrote).
func background(t testing.TB, stdout io.Writer, args ...string) (wait func() (stderr string, code int, took time.Duration)) {
	t.Helper()
	cmd := exec.Command(bins.uebpf, args...)
	var e bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	go func() {
		io.Copy(stdout, pr)
		pr.Close()
	}()
	start := time.Now()
	done := make(chan int, 1)
	go func() {
		cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return func() (string, int, time.Duration) {
		select {
		case code := <-done:
			return e.String(), code, time.Since(start)
		case <-time.After(5 * time.Minute):
			t.Fatalf("uebpf %s still running after 5 minutes:\n%s", strings.Join(args, " "), e.String())
		}
		return "", 0, 0
	}
}

// enable enables bench:ev with the benchmark's filter in a new session
// and returns its id.
func enable(t testing.TB, socket string, flags ...string) string {
	t.Helper()
	out, errOut, code := uebpf(t, append([]string{"trace", "enable", "--socket", socket, "bench:ev", "--filter", `a > 100 && s == "keep*"`}, flags...)...)
	m := regexp.MustCompile(`^session (\d+):`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("enable: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("enabled %s", strings.SplitN(out, "\n", 2)[0])
	return m[1]
}

// written reads the count of a recording's summary line.
func written(t testing.TB, stderr string) uint64 {
	t.Helper()
	m := regexp.MustCompile(`(\d+) events written to`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary in:\n%s", stderr)
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

// counted is what babeltrace2 counts in a trace, or -1 without it.
func counted(t testing.TB, dir string) int64 {
	t.Helper()
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		return -1
	}
	out, err := exec.Command(bt, dir, "-c", "sink.utils.counter", "-p", "step=+0").CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2 %s: %v\n%s", dir, err, out)
	}
	m := regexp.MustCompile(`(?m)^\s*(\d+) Event messages$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("babeltrace2 counter printed:\n%s", out)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// floodSize is the events per goroutine: 10 M in the long suite.
func floodSize() int {
	if *floodEvents > 0 {
		return *floodEvents
	}
	if long() && !racebuild.Enabled {
		return 10_000_000
	}
	return 300_000
}

// TestFloodRecord floods a session that keeps every event while "trace
// record" writes it: the trace holds exactly what the application counts
// as recorded, and the recorder exits 0 once the application has exited.
func TestFloodRecord(t *testing.T) {
	for _, mode := range []string{"discard", "block:inf"} {
		t.Run(mode, func(t *testing.T) {
			a := startApp(t)
			id := enable(t, a.socket, "--buffer-size", strconv.Itoa(*floodBuffer), "--mode", mode)
			dir := filepath.Join(t.TempDir(), "trace")
			wait := background(t, io.Discard, "trace", "record", "--socket", a.socket, "--session", id, "--output", dir)
			time.Sleep(200 * time.Millisecond) // the recorder holds the channel
			n := floodSize()
			r := a.flood(t, n, 2, "exit")
			stderr, code, _ := wait()
			if code != 0 {
				t.Fatalf("trace record exit %d:\n%s", code, stderr)
			}
			got := written(t, stderr)
			if got != r.Recorded || r.Recorded+r.Dropped != r.Fired || r.Fired != uint64(2*n) {
				t.Errorf("the trace holds %d events; the application fired %d, recorded %d, dropped %d", got, r.Fired, r.Recorded, r.Dropped)
			}
			if mode != "discard" && r.Dropped != 0 {
				t.Errorf("block mode dropped %d", r.Dropped)
			}
			if !strings.Contains(stderr, "the application exited") {
				t.Errorf("summary does not say the application exited:\n%s", stderr)
			}
			if long() {
				if c := counted(t, dir); c >= 0 && c != int64(got) {
					t.Errorf("babeltrace2 counts %d events, the recorder wrote %d", c, got)
				}
			}
			t.Logf("flood mode=%s buffer=%d fired=%d seconds=%.3f offered_per_s=%.0f recorded=%d kept_per_s=%.0f dropped=%d",
				mode, *floodBuffer, r.Fired, r.Seconds, float64(r.Fired)/r.Seconds, r.Recorded, float64(r.Recorded)/r.Seconds, r.Dropped)
		})
	}
}

// TestKillRecover kills the application (SIGKILL) right after a flood into
// a file-backed session: "trace recover" turns the file into a trace that
// holds every event the application recorded, and babeltrace2 reads it
// field for field.
func TestKillRecover(t *testing.T) {
	a := startApp(t)
	enable(t, a.socket, "--file-backed", "--mode", "overwrite", "--buffer-size", strconv.Itoa(16<<20))
	stats, _, _ := uebpf(t, "trace", "stats", "--socket", a.socket, "--json")
	m := regexp.MustCompile(`"file":"([^"]+)"`).FindStringSubmatch(stats)
	if m == nil {
		t.Fatalf("no file in the session: %s", stats)
	}
	file := m[1]
	const n = 50000 // fits the rings: nothing overwritten
	r := a.flood(t, n, 2, "kill")
	if err := <-a.done; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("floodapp ended with %v, want killed", err)
	}
	a.done <- nil // for the cleanup
	dir := filepath.Join(t.TempDir(), "recovered")
	_, stderr, code := uebpf(t, "trace", "recover", file, "--output", dir)
	if code != 0 {
		t.Fatalf("trace recover exit %d:\n%s", code, stderr)
	}
	if got := written(t, stderr); got != r.Recorded || r.Recorded != 2*n {
		t.Errorf("recovered %d events; the application recorded %d of %d", got, r.Recorded, 2*n)
	}
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Skip("babeltrace2 is not installed (Debian package babeltrace2): the trace is not read back")
	}
	out, err := exec.Command(bt, dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2*n {
		t.Fatalf("babeltrace2 read %d events, want %d", len(lines), 2*n)
	}
	re := regexp.MustCompile(`bench:ev: \{ a = 1000, b = ([01]), c = (\d+), s = "keep-me" \}$`)
	seen := map[string]bool{}
	for _, l := range lines {
		f := re.FindStringSubmatch(l)
		if f == nil {
			t.Fatalf("babeltrace2 printed %q", l)
		}
		seen[f[1]+"/"+f[2]] = true
	}
	if len(seen) != 2*n {
		t.Errorf("%d distinct events of %d", len(seen), 2*n)
	}
}

// slowWriter takes a line at a time, slowly: a pipe into a slow reader.
type slowWriter struct{}

func (slowWriter) Write(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return len(p), nil
}

// TestStreamStopsOnTime streams a session the application floods, into an
// output slower than the events: the stream ends soon after its
// --duration, whatever the rate and however slow the output (it hung for
// ever, and a recording of 3 s went on for minutes, before the channels).
func TestStreamStopsOnTime(t *testing.T) {
	for _, cmd := range [][]string{{"stream"}, {"stream", "--json"}, {"record"}} {
		t.Run(cmd[0]+strings.Join(cmd[1:], ""), func(t *testing.T) {
			a := startApp(t)
			id := enable(t, a.socket, "--buffer-size", strconv.Itoa(16<<20))
			args := append([]string{"trace"}, cmd...)
			args = append(args, "--socket", a.socket, "--session", id, "--duration", "1s")
			if cmd[0] == "record" {
				args = append(args, "--output", filepath.Join(t.TempDir(), "trace"))
			}
			wait := background(t, slowWriter{}, args...)
			fmt.Fprintf(a.stdin, "go %d 2 quit\n", 50_000_000) // the report is not read
			stderr, code, took := wait()
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			// The bound is the 100 ms; the test allows for a
			// loaded machine, the log says what it took.
			if took > 3*time.Second {
				t.Errorf("--duration 1s took %v", took)
			}
			t.Logf("--duration 1s took %v: %s", took, strings.TrimSpace(stderr))
		})
	}
}

// BenchmarkStream is "trace stream" text and JSON lines into /dev/null
// while the application floods a block-mode session (nothing is dropped:
// the rate is the stream's): the metric is events printed per second of
// the flood.
func BenchmarkStream(b *testing.B) {
	for _, format := range []string{"text", "json"} {
		b.Run(format, func(b *testing.B) {
			var rates []float64
			for range b.N {
				rates = append(rates, streamRate(b, format, 2_000_000))
			}
			var sum float64
			for _, r := range rates {
				sum += r
			}
			b.ReportMetric(sum/float64(len(rates)), "events/s")
		})
	}
}

// streamRate floods 2 × n events into a block-mode session streamed as
// format and returns the events printed per second of the flood.
func streamRate(b *testing.B, format string, n int) float64 {
	b.Helper()
	a := startApp(b)
	id := enable(b, a.socket, "--buffer-size", strconv.Itoa(16<<20), "--mode", "block:inf")
	args := []string{"trace", "stream", "--socket", a.socket, "--session", id}
	if format == "json" {
		args = append(args, "--json")
	}
	wait := background(b, io.Discard, args...)
	time.Sleep(200 * time.Millisecond)
	r := a.flood(b, n, 2, "quit")
	stderr, code, _ := wait()
	if code != 0 || r.Dropped != 0 {
		b.Fatalf("stream exit %d, %d dropped:\n%s", code, r.Dropped, stderr)
	}
	if !strings.HasPrefix(stderr, strconv.FormatUint(r.Recorded, 10)+" events") {
		b.Fatalf("the stream printed %q; the application recorded %d", stderr, r.Recorded)
	}
	return float64(r.Recorded) / r.Seconds
}

// btFields checks that babeltrace2 reads every event of the traces in
// dirs field for field as floodapp fired them, and returns how many.
func btFields(t testing.TB, dirs ...string) int {
	t.Helper()
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Skip("babeltrace2 is not installed (Debian package babeltrace2): the traces are not read back")
	}
	re := regexp.MustCompile(`bench:ev: \{ a = 1000, b = ([01]), c = (\d+), s = "keep-me" \}$`)
	n := 0
	for _, dir := range dirs {
		out, err := exec.Command(bt, dir).Output()
		if err != nil {
			t.Fatalf("babeltrace2 %s: %v", dir, err)
		}
		for l := range strings.Lines(string(out)) {
			if re.FindStringSubmatch(strings.TrimSpace(l)) == nil {
				t.Fatalf("babeltrace2 %s printed %q", dir, l)
			}
			n++
		}
	}
	return n
}

// TestSnapshotAndRotate: a snapshot of a flight recorder (overwrite mode)
// flooded past its rings holds its newest events; a rotating recording is
// a sequence of complete traces that hold every event recorded between
// them; a recording whose application is killed writes every event it
// had committed. babeltrace2 reads them all field for field.
func TestSnapshotAndRotate(t *testing.T) {
	t.Run("snapshot", func(t *testing.T) {
		a := startApp(t)
		id := enable(t, a.socket, "--mode", "overwrite", "--buffer-size", strconv.Itoa(1<<20))
		if r := a.flood(t, 200000, 2, "wait"); r.Recorded != 400000 {
			t.Fatalf("overwrite mode recorded %d of 400000", r.Recorded)
		}
		dir := filepath.Join(t.TempDir(), "snap")
		_, stderr, code := uebpf(t, "trace", "snapshot", "--socket", a.socket, "--session", id, "--output", dir)
		if code != 0 {
			t.Fatalf("snapshot: exit %d\n%s", code, stderr)
		}
		got := written(t, stderr)
		if got == 0 || got >= 400000 {
			t.Fatalf("the snapshot holds %d of 400000 events: want the newest that fit 1 MiB", got)
		}
		if n := btFields(t, dir); uint64(n) != got {
			t.Errorf("babeltrace2 read %d events, the snapshot wrote %d", n, got)
		}
	})
	t.Run("rotate", func(t *testing.T) {
		a := startApp(t)
		id := enable(t, a.socket, "--buffer-size", strconv.Itoa(16<<20), "--mode", "block:inf")
		dir := filepath.Join(t.TempDir(), "chunks")
		wait := background(t, io.Discard, "trace", "record", "--socket", a.socket, "--session", id, "--output", dir, "--rotate-size", strconv.Itoa(1<<20))
		time.Sleep(200 * time.Millisecond)
		r := a.flood(t, 100000, 2, "quit")
		stderr, code, _ := wait()
		if code != 0 {
			t.Fatalf("record: exit %d\n%s", code, stderr)
		}
		chunks, _ := filepath.Glob(filepath.Join(dir, "chunk-*"))
		if len(chunks) < 3 || !strings.Contains(stderr, fmt.Sprintf("in %d traces", len(chunks))) {
			t.Fatalf("%d chunks for %d events in 1 MiB chunks:\n%s", len(chunks), r.Recorded, stderr)
		}
		if n := btFields(t, chunks...); uint64(n) != r.Recorded || r.Recorded != 200000 {
			t.Errorf("the chunks hold %d events; the application recorded %d of 200000", n, r.Recorded)
		}
	})
	t.Run("record through kill -9", func(t *testing.T) {
		a := startApp(t)
		id := enable(t, a.socket, "--buffer-size", strconv.Itoa(16<<20), "--mode", "block:inf")
		dir := filepath.Join(t.TempDir(), "trace")
		wait := background(t, io.Discard, "trace", "record", "--socket", a.socket, "--session", id, "--output", dir)
		time.Sleep(200 * time.Millisecond)
		r := a.flood(t, 100000, 2, "kill")
		stderr, code, _ := wait()
		if code != 0 || !strings.Contains(stderr, "the application exited") {
			t.Fatalf("record of a killed application: exit %d\n%s", code, stderr)
		}
		if got := written(t, stderr); got != r.Recorded || r.Recorded != 200000 {
			t.Errorf("the trace holds %d events; the application recorded %d of 200000 before it was killed", got, r.Recorded)
		}
		if n := btFields(t, dir); uint64(n) != r.Recorded {
			t.Errorf("babeltrace2 read %d, want %d", n, r.Recorded)
		}
	})
}
