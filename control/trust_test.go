package control

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a helper process (helperMain) instead
// of running the tests: the servers of other uids and other processes
// the tests need.
const helperEnv = "UEBPF_CONTROL_TEST_HELPER"

// nobody is the uid (and gid) of helpers run as another user.
const nobody = 65534

// testTemp is the temporary directory the tests started with (isolate
// moves it).
var testTemp = os.TempDir()

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode, os.Args[1:]))
	}
	code := m.Run()
	if nobodyBin.dir != "" {
		os.RemoveAll(nobodyBin.dir)
	}
	os.Exit(code)
}

// helperMain runs a helper; "SELF" in its arguments is its pid. It
// prints "ready PID" once serving, and serves until its stdin closes.
//
//	fake PATH...       listens on each PATH and never answers; for each
//	                   connection, prints "conn PATH BYTES" with the
//	                   bytes it received
//	server PATH N      a control server at PATH, MaxConnsPerUID N
//	client PATH        dials PATH, lists, prints "ok" (and exits)
func helperMain(mode string, args []string) int {
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "SELF", strconv.Itoa(os.Getpid()))
	}
	var out sync.Mutex
	say := func(format string, a ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	switch mode {
	case "fake":
		var wg sync.WaitGroup
		count := func(p string, c net.Conn) {
			wg.Go(func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				n, _ := io.Copy(io.Discard, c)
				say("conn %s %d", p, n)
			})
		}
		var lns []*net.UnixListener
		for _, p := range args {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
			if err != nil {
				say("error %v", err)
				return 1
			}
			lns = append(lns, ln)
			wg.Go(func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					count(p, c)
				}
			})
		}
		say("ready %d", os.Getpid())
		io.Copy(io.Discard, os.Stdin)
		// Count the connections still in the backlog too: closing the
		// listeners would drop them unseen.
		for i, ln := range lns {
			raw, _ := ln.SyscallConn()
			raw.Control(func(fd uintptr) {
				for {
					nfd, _, err := syscall.Accept(int(fd)) // the listener is non-blocking
					if err != nil {
						return
					}
					f := os.NewFile(uintptr(nfd), "conn")
					if c, err := net.FileConn(f); err == nil {
						count(args[i], c)
					}
					f.Close()
				}
			})
			ln.Close()
		}
		wg.Wait()
	case "server":
		n, _ := strconv.Atoi(args[1])
		s, err := Listen(context.Background(), &Options{Path: args[0], MaxConnsPerUID: n})
		if err != nil {
			say("error %v", err)
			return 1
		}
		say("ready %d", os.Getpid())
		io.Copy(io.Discard, os.Stdin)
		s.Close()
	case "client":
		say("ready %d", os.Getpid())
		c, err := Dial(args[0])
		if err == nil {
			_, err = c.List("")
			c.Close()
		}
		if err != nil {
			say("error %v", err)
			return 1
		}
		say("ok")
	default:
		say("error: unknown helper mode %q", mode)
		return 2
	}
	return 0
}

// nobodyBin is a copy of the test binary that user nobody may run (go
// test's build directory is closed to others).
var nobodyBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func nobodyBinary(t *testing.T) string {
	t.Helper()
	nobodyBin.once.Do(func() {
		self, err := os.Executable()
		if err != nil {
			nobodyBin.err = err
			return
		}
		b, err := os.ReadFile(self)
		if err != nil {
			nobodyBin.err = err
			return
		}
		if nobodyBin.dir, err = os.MkdirTemp(testTemp, "uebpf-control-test-"); err != nil {
			nobodyBin.err = err
			return
		}
		nobodyBin.path = filepath.Join(nobodyBin.dir, "control.test")
		if err := os.Chmod(nobodyBin.dir, 0o755); err != nil {
			nobodyBin.err = err
			return
		}
		nobodyBin.err = os.WriteFile(nobodyBin.path, b, 0o755)
	})
	if nobodyBin.err != nil {
		t.Fatalf("a copy of the test binary for uid %d: %v", nobody, nobodyBin.err)
	}
	return nobodyBin.path
}

// needNobody skips a test that runs helpers as user nobody where it
// cannot.
func needNobody(t *testing.T) {
	t.Helper()
	switch {
	case runtime.GOOS != "linux":
		t.Skip("control sockets need Linux")
	case os.Getuid() != 0:
		t.Skip("not root: cannot run a helper as another uid")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed: cannot run a helper as another uid")
	}
}

// helper is a helper process.
type helper struct {
	pid    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr bytes.Buffer
	errMu  sync.Mutex

	once sync.Once
	rest []string // the lines after "ready", once stopped
}

// startHelper runs the test binary as a helper, as user nobody if
// asNobody, and waits for it to be ready.
func startHelper(t *testing.T, asNobody bool, mode string, args ...string) *helper {
	t.Helper()
	argv := []string{os.Args[0]}
	if asNobody {
		argv = []string{"setpriv", "--reuid=" + strconv.Itoa(nobody), "--regid=" + strconv.Itoa(nobody), "--clear-groups", "--", nobodyBinary(t)}
	}
	h := &helper{lines: make(chan string, 256)}
	h.cmd = exec.Command(argv[0], append(argv[1:], args...)...)
	h.cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	h.cmd.Stderr = &lockedWriter{&h.errMu, &h.stderr}
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() { h.stop() })
	select {
	case l := <-h.lines:
		if p, ok := strings.CutPrefix(l, "ready "); ok {
			h.pid, _ = strconv.Atoi(p)
			return h
		}
		h.stop()
		t.Fatalf("helper %s %q: %s\n%s", mode, args, l, h.errors())
	case <-time.After(20 * time.Second):
		h.stop()
		t.Fatalf("helper %s %q did not start\n%s", mode, args, h.errors())
	}
	return nil
}

func (h *helper) errors() string {
	h.errMu.Lock()
	defer h.errMu.Unlock()
	return h.stderr.String()
}

// stop ends the helper (its stdin closes) and returns what it printed
// after "ready".
func (h *helper) stop() []string {
	h.once.Do(func() {
		h.stdin.Close()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-h.lines:
				if ok {
					h.rest = append(h.rest, l)
					continue
				}
			case <-timeout:
				h.cmd.Process.Kill()
				for l := range h.lines {
					h.rest = append(h.rest, l)
				}
			}
			break
		}
		h.cmd.Wait()
	})
	return h.rest
}

// isolate points the directories Sockets searches into a temporary
// directory the test returns, which other users may traverse: RootDir
// is base/run/uebpf, /run/user base/run/user, the temporary directory
// base, and XDG_RUNTIME_DIR unset.
func isolate(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(t, filepath.Join(base, "run"), os.Getuid(), 0o755)
	mkdir(t, filepath.Join(base, "run", "user"), os.Getuid(), 0o755)
	oldRoot, oldRun := rootDir, runUserDir
	rootDir, runUserDir = filepath.Join(base, "run", "uebpf"), filepath.Join(base, "run", "user")
	t.Cleanup(func() { rootDir, runUserDir = oldRoot, oldRun })
	t.Setenv("TMPDIR", base)
	t.Setenv("XDG_RUNTIME_DIR", "")
	return base
}

// mkdir makes a directory of uid with mode.
func mkdir(t *testing.T, dir string, uid int, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	if uid != os.Getuid() {
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
}

// Sockets lists a server only from a directory closed to others, and
// only when its socket belongs to a trusted uid and the process
// answering is the one its name says.
func TestSocketsDirectories(t *testing.T) {
	me, pid := os.Getuid(), os.Getpid()
	self := strconv.Itoa(pid) + ".sock"
	for _, tc := range []struct {
		name   string
		root   bool // needs root
		listed bool
		// setup prepares base and returns the path to serve on.
		setup func(t *testing.T, base string) string
		// after runs once the server listens.
		after func(t *testing.T, path string)
	}{
		{name: "temporary directory 0700", listed: true, setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "uebpf-"+strconv.Itoa(me)), me, 0o700)
			return filepath.Join(base, "uebpf-"+strconv.Itoa(me), self)
		}},
		{name: "temporary directory 0755", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "uebpf-"+strconv.Itoa(me)), me, 0o755)
			return filepath.Join(base, "uebpf-"+strconv.Itoa(me), self)
		}},
		{name: "temporary directory is a link", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "elsewhere"), me, 0o700)
			if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "uebpf-"+strconv.Itoa(me))); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(base, "elsewhere", self)
		}},
		{name: "runtime directory 0755", listed: true, setup: func(t *testing.T, base string) string {
			t.Setenv("XDG_RUNTIME_DIR", filepath.Join(base, "xdg"))
			mkdir(t, filepath.Join(base, "xdg"), me, 0o700)
			mkdir(t, filepath.Join(base, "xdg", "uebpf"), me, 0o755)
			return filepath.Join(base, "xdg", "uebpf", self)
		}},
		{name: "runtime directory group-writable", setup: func(t *testing.T, base string) string {
			t.Setenv("XDG_RUNTIME_DIR", filepath.Join(base, "xdg"))
			mkdir(t, filepath.Join(base, "xdg"), me, 0o700)
			mkdir(t, filepath.Join(base, "xdg", "uebpf"), me, 0o775)
			return filepath.Join(base, "xdg", "uebpf", self)
		}},
		{name: "named by another pid", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "uebpf-"+strconv.Itoa(me)), me, 0o700)
			return filepath.Join(base, "uebpf-"+strconv.Itoa(me), "1.sock") // init's pid; this process answers
		}},
		{name: "directory of another uid", root: true, setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "uebpf-"+strconv.Itoa(me)), nobody, 0o700)
			return filepath.Join(base, "uebpf-"+strconv.Itoa(me), self)
		}},
		{name: "socket file of another uid", root: true, setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "uebpf-"+strconv.Itoa(me)), me, 0o700)
			return filepath.Join(base, "uebpf-"+strconv.Itoa(me), self)
		}, after: func(t *testing.T, path string) {
			if err := os.Chown(path, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && me != 0 {
				t.Skip("not root: cannot give a file to another uid")
			}
			path := tc.setup(t, isolate(t))
			startServer(t, &Options{Path: path})
			if tc.after != nil {
				tc.after(t, path)
			}
			socks, err := Sockets()
			listed := false
			for _, s := range socks {
				if s.Path == path || s.PID == pid {
					listed = true
					if s.Path != path || s.PID != pid || s.UID != me {
						t.Errorf("listed %+v, want {%s %d %d}", s, path, pid, me)
					}
				}
			}
			if listed != tc.listed {
				t.Errorf("listed: %v, want %v (Sockets: %v, %v)", listed, tc.listed, socks, err)
			}
			if err != nil && (tc.listed || !strings.Contains(err.Error(), "ignored")) {
				t.Errorf("Sockets: %v", err)
			}
		})
	}
}

// Dial refuses a server that is not the pid asked for, before sending
// anything; the right pid is served.
func TestDialChecksPID(t *testing.T) {
	s := startServer(t, nil)
	if _, err := (Socket{Path: s.Path(), PID: os.Getpid() + 1}).Dial(); !errors.Is(err, ErrUntrusted) ||
		!strings.Contains(err.Error(), fmt.Sprintf("the server is pid %d uid %d, want pid %d", os.Getpid(), os.Getuid(), os.Getpid()+1)) ||
		!strings.Contains(err.Error(), s.Path()) {
		t.Errorf("a server of another pid: %v, want ErrUntrusted naming the path and both pids", err)
	}
	c, err := Socket{Path: s.Path(), PID: os.Getpid()}.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.PID() != os.Getpid() {
		t.Errorf("PID() = %d, want %d", c.PID(), os.Getpid())
	}
	if _, err := DialPID(-1); err == nil {
		t.Error("DialPID(-1) succeeded")
	}
}

// fakeConns reads a fake helper's "conn PATH BYTES" lines: every
// connection it received, and the bytes sent on each.
func fakeConns(t *testing.T, lines []string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "conn" {
			t.Errorf("fake server: %q", l)
			continue
		}
		n, _ := strconv.Atoi(f[2])
		out[f[1]] = append(out[f[1]], n)
	}
	return out
}

// Root's tools among sockets another user planted: in the temporary
// directory, in that user's runtime directory under other processes'
// pids, and moved into root's own directory. None is listed, dialling
// any is refused before a byte is sent, and DialPID reaches the real
// server of the pid asked for.
func TestPlantedSockets(t *testing.T) {
	needNobody(t)
	base := isolate(t)
	pid := os.Getpid()
	planted := filepath.Join(base, "uebpf-0") // root's temporary directory, taken first
	mkdir(t, planted, nobody, 0o700)
	userDir := filepath.Join(runUserDir, strconv.Itoa(nobody))
	mkdir(t, userDir, nobody, 0o700)
	mkdir(t, filepath.Join(userDir, "uebpf"), nobody, 0o700)
	// 60 sockets: under this process's pid, under live pids and under
	// the fake's own, in both directories.
	var paths []string
	for _, dir := range []string{planted, filepath.Join(userDir, "uebpf")} {
		paths = append(paths, filepath.Join(dir, strconv.Itoa(pid)+".sock"), filepath.Join(dir, "1.sock"))
		for i := range 28 {
			paths = append(paths, filepath.Join(dir, strconv.Itoa(2+i)+".sock"))
		}
	}
	paths[2] = filepath.Join(planted, "SELF.sock")
	fake := startHelper(t, true, "fake", paths...)
	selfPath := filepath.Join(planted, strconv.Itoa(fake.pid)+".sock")

	// The real server: this process, at its default path.
	real, err := Listen(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	if want := filepath.Join(rootDir, strconv.Itoa(pid)+".sock"); real.Path() != want {
		t.Fatalf("the server listens on %s, want %s", real.Path(), want)
	}

	socks, err := Sockets()
	if err != nil || len(socks) != 1 || socks[0] != (Socket{Path: real.Path(), PID: pid, UID: 0}) {
		t.Errorf("Sockets() = %v, %v; want only the real server's", socks, err)
	}
	for range 20 {
		c, err := DialPID(pid)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.List(""); err != nil || c.PID() != pid {
			t.Fatalf("DialPID(%d) reached pid %d: %v", pid, c.PID(), err)
		}
		c.Close()
	}

	refused := func(what string, err error, path string) {
		t.Helper()
		want := fmt.Sprintf("the server is pid %d uid %d", fake.pid, nobody)
		if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v; want ErrUntrusted naming %s and %q", what, err, path, want)
		}
	}
	_, err = Dial(selfPath)
	refused("Dial of a planted socket", err, selfPath)
	_, err = (Socket{Path: selfPath, PID: fake.pid}).Dial()
	refused("Dial of a planted socket with its pid", err, selfPath)
	in := bytes.NewReader(frame(`{"id":1,"op":"hello","version":1}`))
	err = ServeStdio(context.Background(), Socket{Path: selfPath}, in, io.Discard)
	refused("ServeStdio to a planted socket", err, selfPath)
	if _, err := DialPID(fake.pid); err == nil {
		t.Errorf("DialPID(%d), the planted socket's pid: connected", fake.pid)
	}

	// Moved into root's directory under the fake's pid: DialPID finds it
	// at the default path, and the peer check refuses it; its file given
	// to root changes nothing.
	moved := filepath.Join(rootDir, strconv.Itoa(fake.pid)+".sock")
	if err := os.Rename(selfPath, moved); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []int{nobody, 0} {
		if err := os.Chown(moved, owner, owner); err != nil {
			t.Fatal(err)
		}
		if socks, _ := Sockets(); len(socks) != 1 {
			t.Errorf("socket file of uid %d in root's directory: Sockets() = %v", owner, socks)
		}
		_, err := DialPID(fake.pid)
		refused(fmt.Sprintf("DialPID of a socket file of uid %d in root's directory", owner), err, moved)
	}

	conns := fakeConns(t, fake.stop())
	for p, ns := range conns {
		for _, n := range ns {
			if n != 0 {
				t.Errorf("the fake at %s received %d bytes", p, n)
			}
		}
	}
	// Two Dials, ServeStdio, and the DialPIDs after the move.
	if n := len(conns[selfPath]); n < 5 {
		t.Errorf("the fake at %s saw %d connections, want at least 5: %v", selfPath, n, conns)
	}
}

// Root controls a user's application through the socket in the user's
// runtime directory, trusting that user there, and only there: the same
// server dialled by path is refused, as is a pid it is not.
func TestUserServer(t *testing.T) {
	needNobody(t)
	isolate(t)
	home := filepath.Join(runUserDir, strconv.Itoa(nobody))
	mkdir(t, home, nobody, 0o700)
	mkdir(t, filepath.Join(home, "uebpf"), nobody, 0o700)
	srv := startHelper(t, true, "server", filepath.Join(home, "uebpf", "SELF.sock"), "0")
	path := filepath.Join(home, "uebpf", strconv.Itoa(srv.pid)+".sock")

	socks, err := Sockets()
	if want := (Socket{Path: path, PID: srv.pid, UID: nobody}); err != nil || len(socks) != 1 || socks[0] != want {
		t.Errorf("Sockets() = %v, %v; want [%v]", socks, err, want)
	}
	for _, tc := range []struct {
		name string
		dial func() (*Client, error)
		ok   bool
	}{
		{"DialPID", func() (*Client, error) { return DialPID(srv.pid) }, true},
		{"Dial with the uid trusted", func() (*Client, error) { return Socket{Path: path, UID: nobody}.Dial() }, true},
		{"Dial", func() (*Client, error) { return Dial(path) }, false},
		{"Dial with the uid trusted, another pid", func() (*Client, error) { return Socket{Path: path, PID: os.Getpid(), UID: nobody}.Dial() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.dial()
			if !tc.ok {
				if want := fmt.Sprintf("the server is pid %d uid %d", srv.pid, nobody); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), want) {
					t.Errorf("%v, want ErrUntrusted saying %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.List(""); err != nil || c.PID() != srv.pid {
				t.Errorf("pid %d (want %d): list: %v", c.PID(), srv.pid, err)
			}
		})
	}
	// A runtime directory named by a uid it does not belong to is not
	// searched: a link to the user's, another of the user's.
	if err := os.Symlink(home, filepath.Join(runUserDir, "1000")); err != nil {
		t.Fatal(err)
	}
	if socks, err := Sockets(); len(socks) != 1 {
		t.Errorf("with a link to the user's directory: Sockets() = %v, %v; want one", socks, err)
	}
	mkdir(t, filepath.Join(runUserDir, "1001"), nobody, 0o700)
	mkdir(t, filepath.Join(runUserDir, "1001", "uebpf"), nobody, 0o700)
	if err := os.Rename(path, filepath.Join(runUserDir, "1001", "uebpf", strconv.Itoa(srv.pid)+".sock")); err != nil {
		t.Fatal(err)
	}
	if socks, err := Sockets(); len(socks) != 0 {
		t.Errorf("in a directory of uid %d named 1001: Sockets() = %v, %v; want none", nobody, socks, err)
	}
}

// Listen at the default path replaces the socket a dead process with the
// same pid left there, and refuses one a live process answers on.
func TestListenDefaultPathTaken(t *testing.T) {
	for _, tc := range []struct {
		name string
		// plant puts something at path and returns the error Listen
		// must give ("" for none).
		plant func(t *testing.T, path string) string
	}{
		{"a dead process's socket", func(t *testing.T, path string) string {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close()
			return ""
		}},
		{"this process's server", func(t *testing.T, path string) string {
			s, err := Listen(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return path + " is served by this process already"
		}},
		{"another live process", func(t *testing.T, path string) string {
			h := startHelper(t, false, "fake", path)
			return fmt.Sprintf("%s is served by a live process (pid %d, uid %d)", path, h.pid, os.Getuid())
		}},
		{"a file", func(t *testing.T, path string) string {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return path + " exists and is not a socket"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			if err := os.MkdirAll(Dir(), 0o700); err != nil {
				t.Fatal(err)
			}
			path, err := DefaultPath(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			want := tc.plant(t, path)
			s, err := Listen(context.Background(), nil)
			if want != "" {
				if err == nil {
					s.Close()
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Listen: %v, want an error saying %q", err, want)
				}
				if _, err := os.Lstat(path); err != nil {
					t.Errorf("what was at %s is gone: %v", path, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := DialPID(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
		})
	}
}
