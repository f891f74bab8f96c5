package control

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/uebpf/uebpf/tracepoint"
)

// reqEvent is the payload of most tests.
type reqEvent struct {
	Seq      uint64
	Status   uint16
	Method   [8]byte
	_        [6]byte
	Duration int64 `tracepoint:"duration_us"`
	Ratio    float32
	OK       bool
	_        [3]byte
}

var nextProvider atomic.Int64

// declare declares provider:name tracepoints under a provider unique to
// the test.
func declare[T any](t testing.TB, names ...string) (string, []*tracepoint.Tracepoint[T]) {
	t.Helper()
	provider := fmt.Sprintf("ctl%d", nextProvider.Add(1))
	var tps []*tracepoint.Tracepoint[T]
	for _, n := range names {
		tp, err := tracepoint.Declare[T](provider, n)
		if err != nil {
			t.Fatal(err)
		}
		tps = append(tps, tp)
	}
	return provider, tps
}

// startServer serves a socket in a temporary directory until the test
// ends.
func startServer(t testing.TB, opts *Options) *Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Path == "" {
		o.Path = filepath.Join(t.TempDir(), "s.sock")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Listen(ctx, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		s.Close()
	})
	return s
}

func dial(t testing.TB, path string) *Client {
	t.Helper()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func event(seq uint64, status uint16, method string, dur int64) reqEvent {
	ev := reqEvent{Seq: seq, Status: status, Duration: dur, Ratio: float32(seq) / 4, OK: status < 400}
	copy(ev.Method[:], method)
	return ev
}

// collect reads n events from st, failing after a timeout.
func collect(t testing.TB, st *Stream, n int) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []Event
	for len(out) < n {
		e, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(out), n, err)
		}
		out = append(out, e)
	}
	return out
}

// checkEvent compares a streamed event with the payload fired.
func checkEvent(t testing.TB, e Event, name string, ev reqEvent) {
	t.Helper()
	want := Fields{
		{"seq", ev.Seq},
		{"status", uint64(ev.Status)},
		{"method", strings.TrimRight(string(ev.Method[:]), "\x00")},
		{"duration_us", ev.Duration},
		{"ratio", float64(ev.Ratio)},
		{"ok", ev.OK},
	}
	if e.Tracepoint != name || fmt.Sprint(e.Fields) != fmt.Sprint(want) {
		t.Errorf("event %s %v, want %s %v", e.Tracepoint, e.Fields, name, want)
	}
	if e.Vpid != int64(os.Getpid()) || e.Time < 1e18 || e.Procname == "" {
		t.Errorf("event context: vpid %d time %d procname %q", e.Vpid, e.Time, e.Procname)
	}
}

func TestEndToEnd(t *testing.T) {
	provider, tps := declare[reqEvent](t, "request", "other")
	tp, other := tps[0], tps[1]
	s := startServer(t, nil)
	c := dial(t, s.Path())
	if c.PID() != os.Getpid() {
		t.Errorf("server pid %d, want %d", c.PID(), os.Getpid())
	}

	list, err := c.List(provider + ":*")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != provider+":other" || list[1].Name != provider+":request" {
		t.Fatalf("list: %+v", list)
	}
	wantFields := []FieldInfo{
		{"seq", "u64", 0, 8}, {"status", "u16", 8, 2}, {"method", "string[8]", 10, 8},
		{"duration_us", "s64", 24, 8}, {"ratio", "f32", 32, 4}, {"ok", "bool", 36, 1},
	}
	if fmt.Sprint(list[1].Fields) != fmt.Sprint(wantFields) || list[1].Size != 40 {
		t.Errorf("fields %v size %d, want %v size 40", list[1].Fields, list[1].Size, wantFields)
	}

	const filter = `status >= 500 && duration_us > 100`
	si, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	if len(si.Attachments) != 1 || !strings.Contains(si.Attachments[0].Description, filter) {
		t.Errorf("enabled: %+v", si)
	}
	st, err := c.Stream(si.ID)
	if err != nil {
		t.Fatal(err)
	}

	const goroutines, perG = 8, 500
	want := map[uint64]reqEvent{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				seq := uint64(g*perG + i)
				ev := event(seq, []uint16{200, 404, 500, 503}[i%4], []string{"GET", "POST", "DELETE"}[i%3], int64(i%7)*50)
				if ev.Status >= 500 && ev.Duration > 100 {
					mu.Lock()
					want[seq] = ev
					mu.Unlock()
				}
				tp.Fire(&ev)
				other.Fire(&ev)
			}
		})
	}
	wg.Wait()
	got := collect(t, st, len(want))
	for _, e := range got {
		seq, _ := e.Fields.Get("seq").(uint64)
		ev, ok := want[uint64(seq)]
		if !ok {
			t.Fatalf("event %d streamed twice or not matching: %v", seq, e.Fields)
		}
		delete(want, uint64(seq))
		checkEvent(t, e, tp.Name(), ev)
	}

	tpStats, sessions, err := c.Stats(provider + ":*")
	if err != nil {
		t.Fatal(err)
	}
	matched := uint64(len(got))
	if ts := tpStats[1].Stats; ts.Fired != goroutines*perG || ts.Matched != matched || ts.Recorded != matched || ts.Dropped != 0 {
		t.Errorf("tracepoint stats %+v, want %d fired, %d matched and recorded", ts, goroutines*perG, matched)
	}
	if os := tpStats[0].Stats; os.Fired != 0 {
		t.Errorf("a tracepoint nothing was attached to counts %+v", os)
	}
	var ss *SessionInfo
	for i := range sessions {
		if sessions[i].ID == si.ID {
			ss = &sessions[i]
		}
	}
	if ss == nil || ss.Stats.Recorded != matched || ss.Stats.Dropped != 0 || !ss.Consumed || ss.Attachments[0].Stats.Matched != matched {
		t.Errorf("session stats %+v, want %d recorded", ss, matched)
	}

	if atts, err := c.Disable(si.ID); err != nil || len(atts) != 1 || atts[0].Tracepoint != tp.Name() {
		t.Fatalf("disable: %v %v", atts, err)
	}
	for i := range 10 {
		ev := event(uint64(100000+i), 500, "GET", 1000)
		tp.Fire(&ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e, err := st.Next(ctx); err != io.EOF {
		t.Errorf("after disable: %v %v, want io.EOF", e, err)
	}
	if tpStats, _, _ := c.Stats(tp.Name()); tpStats[0].Stats.Fired != goroutines*perG {
		t.Errorf("fired after disable: %+v", tpStats[0].Stats)
	}
	if _, err := c.Disable(si.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second disable: %v, want ErrNotFound", err)
	}
}

// Two clients hold separate sessions; a session outlives the client that
// enabled it.
func TestTwoClients(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, nil)
	a, b := dial(t, s.Path()), dial(t, s.Path())
	sa, err := a.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: "status == 200"})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: `status == 404 || method == "PUT"`})
	if err != nil {
		t.Fatal(err)
	}
	if sa.ID == sb.ID {
		t.Fatal("one session for two clients")
	}
	stb, err := b.Stream(sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Stream(sb.ID); !errors.Is(err, ErrBusy) {
		t.Errorf("a second stream of a session: %v, want ErrBusy", err)
	}
	for i, st := range []uint16{200, 404, 500, 200} {
		ev := event(uint64(i), st, "GET", 1)
		tp.Fire(&ev)
	}
	put := event(4, 200, "PUT", 1)
	tp.Fire(&put)
	// a hangs up without disabling: its session keeps recording.
	a.Close()
	late := event(5, 200, "GET", 1)
	tp.Fire(&late)

	for i, e := range collect(t, stb, 2) {
		if seq := e.Fields.Get("seq"); seq != []uint64{1, 4}[i] {
			t.Errorf("client b event %d: seq %v", i, seq)
		}
	}
	c := dial(t, s.Path())
	_, sessions, err := c.Stats(tp.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 2 || sessions[0].ID != sa.ID || sessions[0].Stats.Recorded != 4 {
		t.Fatalf("sessions after a's disconnect: %+v", sessions)
	}
	sta, err := c.Stream(sa.ID)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []any
	for _, e := range collect(t, sta, 4) {
		seqs = append(seqs, e.Fields.Get("seq"))
	}
	if fmt.Sprint(seqs) != "[0 3 4 5]" {
		t.Errorf("a's session, streamed by c: seqs %v", seqs)
	}
	if err := sta.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := sta.Next(context.Background()); err != io.EOF {
		t.Errorf("after Stop: %v", err)
	}
	// A stopped stream can start again.
	sta, err = c.Stream(sa.ID)
	if err != nil {
		t.Fatal(err)
	}
	again := event(6, 200, "GET", 1)
	tp.Fire(&again)
	if e := collect(t, sta, 1)[0]; e.Fields.Get("seq") != uint64(6) {
		t.Errorf("restarted stream: %v", e.Fields)
	}
	if _, err := c.Disable(sa.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Disable(sb.ID); err != nil {
		t.Fatal(err)
	}
}

// A program from an object sent over the socket: loaded and verified in
// the application, its maps read and written through the socket.
func TestObject(t *testing.T) {
	type syscallExit struct {
		Pid       uint32
		Syscall   uint32
		LatencyNs uint64
	}
	obj, err := os.ReadFile("../examples/filter/filter.bpf.o")
	if err != nil {
		t.Skip("no example object:", err)
	}
	_, tps := declare[syscallExit](t, "syscall_exit")
	tp := tps[0]
	s := startServer(t, nil)
	c := dial(t, s.Path())

	_, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), Object: obj, Program: "count_slow", ContextSize: 8})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "verif") {
		t.Errorf("a program verified for too short a context: %v, want the verifier's refusal", err)
	}
	if _, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), Object: obj, Program: "nosuch"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("no such program: %v", err)
	}
	if _, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), Object: []byte("not an ELF")}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("object without a program name and with a tracepoint: %v", err)
	}
	if _, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), Object: []byte("not an ELF"), Program: "x"}); !errors.Is(err, ErrRefused) {
		t.Errorf("not an ELF object: %v", err)
	}
	_, sessions, _ := c.Stats(tp.Name())
	if len(sessions) != 0 {
		t.Errorf("failed enables left sessions: %+v", sessions)
	}

	si, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Object: obj, Program: "count_slow"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(si.Maps) == "[]" || !strings.Contains(fmt.Sprint(si.Maps), "slow_calls") {
		t.Errorf("session maps %v", si.Maps)
	}
	for i, ev := range []syscallExit{{7, 1, 5e6}, {7, 2, 10}, {9, 1, 2e6}, {7, 3, 3e6}} {
		tp.Fire(&ev)
		_ = i
	}
	key := binary.LittleEndian.AppendUint32(nil, 7)
	v, err := c.MapLookup(si.ID, "slow_calls", key)
	if err != nil || len(v) != 8 || binary.LittleEndian.Uint64(v) != 2 {
		t.Errorf("slow_calls[7] = %x, %v; want 2", v, err)
	}
	entries, all, err := c.MapIterate(si.ID, "slow_calls", 0)
	if err != nil || !all || len(entries) != 2 {
		t.Errorf("iterate: %v %v %v", entries, all, err)
	}
	if err := c.MapUpdate(si.ID, "slow_calls", key, binary.LittleEndian.AppendUint64(nil, 40), 0); err != nil {
		t.Fatal(err)
	}
	ev := syscallExit{7, 4, 4e6}
	tp.Fire(&ev)
	if v, _ := c.MapLookup(si.ID, "slow_calls", key); binary.LittleEndian.Uint64(v) != 41 {
		t.Errorf("after update and a firing: %x, want 41", v)
	}
	if err := c.MapDelete(si.ID, "slow_calls", key); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MapLookup(si.ID, "slow_calls", key); !errors.Is(err, ErrNotFound) {
		t.Errorf("lookup after delete: %v", err)
	}
	if _, err := c.MapLookup(si.ID, "slow_calls", []byte{1}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("short key: %v", err)
	}
	if err := c.MapUpdate(si.ID, "slow_calls", key, []byte{1}, 0); !errors.Is(err, ErrBadRequest) {
		t.Errorf("short value: %v", err)
	}
	if _, err := c.MapLookup(si.ID, "nosuch", key); !errors.Is(err, ErrNotFound) {
		t.Errorf("no such map: %v", err)
	}
	// The program keeps slow calls: they were recorded too.
	st, err := c.Stream(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, st, 4)
	if evs[3].Fields.Get("latency_ns") != uint64(4e6) || evs[0].Fields.Get("pid") != uint64(7) {
		t.Errorf("recorded events: %v", evs)
	}
	if _, err := c.Disable(si.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MapLookup(si.ID, "slow_calls", key); !errors.Is(err, ErrNotFound) {
		t.Errorf("map of a disabled session: %v", err)
	}
}

// rawConn speaks frames by hand, for requests the client would not send.
type rawConn struct {
	t testing.TB
	net.Conn
}

func rawDial(t testing.TB, path string, hello bool) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	rc := &rawConn{t, nc}
	if hello {
		if r := rc.roundTrip(`{"id":1,"op":"hello","version":1}`); r.Error != "" {
			t.Fatal(r.Error)
		}
	}
	return rc
}

func (rc *rawConn) send(body string) {
	rc.t.Helper()
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	if _, err := rc.Write(append(b, body...)); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawConn) recv() Response {
	rc.t.Helper()
	rc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var r Response
	if err := readResponse(rc, &r, nil); err != nil {
		rc.t.Fatal(err)
	}
	return r
}

func (rc *rawConn) roundTrip(body string) Response {
	rc.t.Helper()
	rc.send(body)
	return rc.recv()
}

// openFDs counts the process's open file descriptors.
func openFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}

// settle waits for the count of goroutines and fds to come back down to
// at most what they were.
func settle(t testing.TB, goroutines, fds int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines && f <= fds {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("leak: %d goroutines (were %d), %d fds (were %d)\n%s", g, goroutines, f, fds, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBadRequests(t *testing.T) {
	provider, _ := declare[reqEvent](t, "request")
	s := startServer(t, nil)
	// Warm up what lives on (the runtime's timers, the pollers).
	dial(t, s.Path()).List("")
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	rc := rawDial(t, s.Path(), true)
	for _, tc := range []struct{ body, code string }{
		{`{"id":2,"op":"nosuch"}`, CodeBadRequest},
		{`not json`, CodeBadRequest},
		{`{"id":3}`, CodeBadRequest},
		{`{"id":4,"op":"hello","version":1}`, CodeBadRequest},
		{`{"id":5,"op":"list","tracepoint":"[x"}`, CodeBadRequest},
		{`{"id":6,"op":"list","tracepoint":"nosuch:tp"}`, CodeNotFound},
		{`{"id":7,"op":"enable"}`, CodeBadRequest},
		{`{"id":8,"op":"enable","tracepoint":"` + provider + `:*","filter":"status >"}`, CodeRefused},
		{`{"id":9,"op":"enable","tracepoint":"` + provider + `:*","filter":"nosuch == 1"}`, CodeRefused},
		{`{"id":10,"op":"enable","tracepoint":"` + provider + `:*","context":["nosuch"]}`, CodeBadRequest},
		{`{"id":11,"op":"enable","tracepoint":"` + provider + `:*","buffer_size":1e12}`, CodeBadRequest},
		{`{"id":12,"op":"enable","tracepoint":"` + provider + `:*","buffer_size":1000000000}`, CodeLimit},
		{`{"id":13,"op":"enable","tracepoint":"x:y","filter":"1","object":"AA=="}`, CodeBadRequest},
		{`{"id":14,"op":"enable","tracepoint":"x:y","session":999}`, CodeNotFound},
		{`{"id":15,"op":"disable"}`, CodeBadRequest},
		{`{"id":16,"op":"disable","session":999}`, CodeNotFound},
		{`{"id":17,"op":"disable","attachment":999}`, CodeNotFound},
		{`{"id":18,"op":"channel","session":999}`, CodeNotFound},
		{`{"id":19,"op":"release","session":999}`, CodeNotFound},
		{`{"id":20,"op":"map_lookup","session":999,"map":"m","key":"00"}`, CodeNotFound},
		{`{"id":21,"op":"map_lookup","session":1,"map":"m","key":"zz"}`, CodeBadRequest},
		{`{"id":22,"op":"enable","tracepoint":"x:y","object":"AA==","program":"p","context_size":-1}`, CodeBadRequest},
		{`{"id":23,"op":"list","version":"x"}`, CodeBadRequest},
	} {
		r := rc.roundTrip(tc.body)
		if r.Code != tc.code || r.Error == "" {
			t.Errorf("%s: code %q error %q, want code %q", tc.body, r.Code, r.Error, tc.code)
		}
	}
	// Still serving, and no session was left behind by the failures.
	if r := rc.roundTrip(`{"id":30,"op":"stats"}`); r.Error != "" || len(r.Sessions) != 0 {
		t.Errorf("stats after bad requests: %+v", r)
	}

	// Connections that break the protocol are hung up on.
	for _, tc := range []struct {
		name  string
		hello bool
		raw   []byte
		code  string
	}{
		{"huge frame", true, binary.LittleEndian.AppendUint32(nil, MaxFrameSize+1), CodeBadRequest},
		{"huge frame before hello", false, binary.LittleEndian.AppendUint32(nil, math.MaxUint32), CodeBadRequest},
		{"no hello", false, frame(`{"id":1,"op":"list"}`), CodeBadRequest},
		{"other version", false, frame(`{"id":1,"op":"hello","version":2}`), CodeVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := rawDial(t, s.Path(), tc.hello)
			rc.Write(tc.raw)
			if r := rc.recv(); r.Code != tc.code {
				t.Errorf("code %q (%s), want %q", r.Code, r.Error, tc.code)
			}
			if _, err := rc.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("connection not closed: %v", err)
			}
		})
	}
	// A truncated frame and a silent close.
	rc2 := rawDial(t, s.Path(), true)
	rc2.Write([]byte{100, 0, 0, 0, '{'})
	rc2.Close()
	rc.Close()

	settle(t, goroutines, fds)
}

func frame(body string) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// The client reports a server's refusal of its version as ErrVersion.
func TestVersionRefused(t *testing.T) {
	cli, srv := net.Pipe()
	go func() {
		readFrame(srv, nil)
		f, _ := encodeFrame(&Response{ID: 1, Error: "protocol version 1 not supported", Code: CodeVersion})
		srv.Write(f)
		srv.Close()
	}()
	if _, err := NewClient(cli); !errors.Is(err, ErrVersion) {
		t.Errorf("refused version: %v, want ErrVersion", err)
	}
}

// childEnv names the socket a re-executed test binary dials after
// switching to another uid.
const childEnv = "UEBPF_CONTROL_TEST_OTHER_UID_SOCKET"

func TestOtherUIDRefused(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		// The child: drop to nobody, then connect.
		if err := syscall.Setgid(65534); err != nil {
			fmt.Println("setgid:", err)
			os.Exit(3)
		}
		if err := syscall.Setuid(65534); err != nil {
			fmt.Println("setuid:", err)
			os.Exit(3)
		}
		_, err := Dial(path)
		fmt.Printf("uid %d: dial: %v\n", os.Getuid(), err)
		if errors.Is(err, ErrDenied) {
			os.Exit(0)
		}
		os.Exit(1)
	}
	if os.Getuid() != 0 {
		t.Skip("not root: cannot switch a child process to another uid")
	}
	var log bytes.Buffer
	var logMu sync.Mutex
	s := startServer(t, &Options{Logger: slog.New(slog.NewTextHandler(&lockedWriter{&logMu, &log}, nil))})
	// Open the file modes, which would refuse the child first: this
	// tests SO_PEERCRED.
	for _, dir := range []string{filepath.Dir(filepath.Dir(s.Path())), filepath.Dir(s.Path())} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(s.Path(), 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOtherUIDRefused$")
	cmd.Env = append(os.Environ(), childEnv+"="+s.Path())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child: %s", bytes.TrimSpace(out))
	logMu.Lock()
	logged := log.String()
	logMu.Unlock()
	if !strings.Contains(logged, "connection refused") || !strings.Contains(logged, "peer_uid=65534") {
		t.Errorf("refusal not logged:\n%s", logged)
	}
	// The owner still connects.
	dial(t, s.Path()).List("")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestSocketFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	dir := filepath.Join(t.TempDir(), "sub")
	path := filepath.Join(dir, "1.sock")
	s := startServer(t, &Options{Path: path})
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", p, fi.Mode(), err, want)
		}
	}
	if _, err := Listen(context.Background(), &Options{Path: path}); err == nil {
		t.Error("a second server on a live socket")
	}
	s.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after Close: %v", err)
	}

	// A socket file its process left behind is replaced.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	s2, err := Listen(ctx, &Options{Path: path})
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	dial(t, s2.Path()).List("")
	cancel() // the context's end closes the server
	deadline := time.Now().Add(5 * time.Second)
	for _, err := os.Stat(path); err == nil && time.Now().Before(deadline); _, err = os.Stat(path) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after the context ended: %v", err)
	}
}

// The default path, and Sockets finding it.
func TestDefaultPathAndSockets(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("control sockets need Linux")
	}
	xdg := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	// A socket of a pid above any pid_max: a dead process's.
	dead := filepath.Join(xdg, "uebpf", "4194305.sock")
	os.Mkdir(filepath.Dir(dead), 0o700)
	deadInDir := filepath.Join(Dir(), "4194306.sock")
	os.Mkdir(Dir(), 0o700)
	for _, p := range []string{dead, deadInDir} {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close()
	}
	t.Cleanup(func() { os.Remove(dead); os.Remove(deadInDir) })
	s, err := Listen(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want, _ := DefaultPath(os.Getpid())
	if s.Path() != want {
		t.Errorf("path %s, want %s", s.Path(), want)
	}
	socks, err := Sockets()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, so := range socks {
		found = found || so == Socket{Path: want, PID: os.Getpid(), UID: os.Getuid()}
		if so.Path == dead {
			t.Errorf("Sockets() lists %s, whose process is gone", dead)
		}
	}
	if !found {
		t.Errorf("Sockets() = %v, without %s", socks, want)
	}
	if _, err := os.Lstat(deadInDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Listen left the dead process's socket %s: %v", deadInDir, err)
	}
}

// stdioPipe is one end of ServeStdio's stdin and stdout, for NewClient.
type stdioPipe struct {
	io.Reader
	io.WriteCloser
}

func TestServeStdio(t *testing.T) {
	provider, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(context.Background(), Socket{Path: s.Path()}, inR, outW)
		outW.Close()
	}()
	c, err := NewClient(stdioPipe{outR, inW})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List(provider + ":*")
	if err != nil || len(list) != 1 {
		t.Fatalf("list through stdio: %v %v", list, err)
	}
	si, err := c.Enable(EnableOptions{Tracepoint: provider + ":request", Context: []string{"goid"}})
	if err != nil {
		t.Fatal(err)
	}
	// A pipe carries no descriptors: the far end relays the channel.
	st, err := c.Stream(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ch.Info().Remote {
		t.Error("the channel over stdio is not relayed")
	}
	for i := range 5000 {
		ev := event(uint64(i), 200, "GET", 1)
		tp.Fire(&ev)
	}
	for i, e := range collect(t, st, 5000) {
		if e.Fields.Get("seq") != uint64(i) && i < 2500 {
			// One goroutine fired them: one ring, in order.
			t.Fatalf("relayed event %d: %v", i, e.Fields)
		}
		if e.Goid == 0 || e.Has != tracepoint.HasGoid || e.Vpid != int64(os.Getpid()) {
			t.Fatalf("relayed event %d: %+v", i, e)
		}
	}
	if err := st.Stop(); err != nil {
		t.Fatal(err)
	}
	// A second consumer of the session starts where the first stopped.
	st, err = c.Stream(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := event(9999, 200, "GET", 1)
	tp.Fire(&last)
	if e := collect(t, st, 1)[0]; e.Fields.Get("seq") != uint64(9999) {
		t.Errorf("after a restart: %v", e.Fields)
	}
	if _, err := c.Disable(si.ID); err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after the client closed")
	}
	if err := ServeStdio(context.Background(), Socket{Path: filepath.Join(t.TempDir(), "none.sock")}, inR, outW); err == nil {
		t.Error("ServeStdio to no socket")
	}
}

// 4 clients with a session each, 8 goroutines firing: each client gets
// exactly its events (run with -race).
func TestConcurrentClients(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, nil)
	const clients, firing, perG = 4, 8, 400
	type cl struct {
		c  *Client
		st *Stream
		id uint64
	}
	var cls []cl
	for i := range clients {
		c := dial(t, s.Path())
		si, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: fmt.Sprintf("status == %d", 200+i), Context: []string{"vtid"}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Stream(si.ID)
		if err != nil {
			t.Fatal(err)
		}
		cls = append(cls, cl{c, st, si.ID})
	}
	var wg sync.WaitGroup
	for g := range firing {
		wg.Go(func() {
			for i := range perG {
				ev := event(uint64(g*perG+i), uint16(200+i%5), "GET", 1)
				tp.Fire(&ev)
			}
		})
	}
	// Clients list and read stats while events flow.
	for _, x := range cls {
		wg.Go(func() {
			for range 20 {
				if _, _, err := x.c.Stats(tp.Name()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var got [clients]int
	var rg sync.WaitGroup
	for i, x := range cls {
		rg.Go(func() {
			seen := map[uint64]bool{}
			for _, e := range collect(t, x.st, firing*perG/5) {
				seq := e.Fields.Get("seq").(uint64)
				if e.Fields.Get("status") != uint64(200+i) || seen[seq] || e.Vtid == 0 {
					t.Errorf("client %d: event %v (vtid %d) twice or not its own", i, e.Fields, e.Vtid)
				}
				seen[seq] = true
			}
			got[i] = len(seen)
		})
	}
	wg.Wait()
	rg.Wait()
	for i, x := range cls {
		if _, err := x.c.Disable(x.id); err != nil {
			t.Error(err)
		}
		if st := x.st.Stats(); st.Dropped != 0 {
			t.Errorf("client %d: %d dropped", i, st.Dropped)
		}
	}
	t.Logf("events per client: %v", got)
}

// Events encode as JSON by hand as Event.MarshalJSON encodes the Event
// they decode to, and encoding/json reads both.
func TestEventEncoding(t *testing.T) {
	type allKinds struct {
		U8   uint8
		S8   int8
		U16  uint16
		S16  int16
		S32  int32
		F32  float32
		F64  float64
		B    bool
		Str  [7]byte
		U64  uint64
		S64  int64
		NaN  float64
		Inf  float32
		NInf float32
	}
	_, tps := declare[allKinds](t, "kinds")
	info := tps[0].Info()
	v := allKinds{U8: 255, S8: -128, U16: 65535, S16: -2, S32: math.MinInt32, F32: 0.1, F64: -1e300, B: true,
		U64: math.MaxUint64, S64: math.MinInt64, NaN: math.NaN(), Inf: float32(math.Inf(1)), NInf: float32(math.Inf(-1))}
	copy(v.Str[:], "a\"\x01\xff<")
	payload := unsafeBytes(&v)
	for _, has := range []tracepoint.Collected{0, tracepoint.HasVtid, tracepoint.HasGoid | tracepoint.HasVtid} {
		ev := &tracepoint.Event{Info: &info, TimestampNs: 12, Has: has, Vtid: 77, Goid: 88, Payload: payload}
		o := &origin{session: 3, pid: 34, procname: "proc\u2028", clockOffset: 1000}
		b := appendEventJSON(nil, o, ev, true)
		e := newEvent(o, ev)
		m, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(m) != string(b) {
			t.Errorf("by hand:\n%s\nEvent.MarshalJSON:\n%s", b, m)
		}
		var generic map[string]any
		if err := json.Unmarshal(b, &generic); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if generic["ts"] != float64(1012) || generic["session"] != float64(3) {
			t.Errorf("ts %v session %v: want the wall time 1012, session 3", generic["ts"], generic["session"])
		}
		if _, ok := generic["vtid"]; ok != (has&tracepoint.HasVtid != 0) {
			t.Errorf("vtid present %t with %b collected", ok, has)
		}
		if _, ok := generic["goid"]; ok != (has&tracepoint.HasGoid != 0) {
			t.Errorf("goid present %t with %b collected", ok, has)
		}
		want := fmt.Sprint([]any{uint64(255), int64(-128), uint64(65535), int64(-2), int64(math.MinInt32), float64(float32(0.1)), -1e300, true,
			"a\"\x01\xff<", uint64(math.MaxUint64), int64(math.MinInt64), math.NaN(), math.Inf(1), math.Inf(-1)})
		var vals []any
		for _, f := range e.Fields {
			vals = append(vals, f.Value)
		}
		if fmt.Sprint(vals) != want {
			t.Errorf("decoded %v\nwant    %v", vals, want)
		}
		var fields Fields
		if err := json.Unmarshal([]byte(fmt.Sprint(string(b[strings.Index(string(b), `"fields":`)+9:len(b)-1]))), &fields); err != nil || len(fields) != len(info.Fields) {
			t.Errorf("fields back from JSON: %v %v", fields, err)
		}
	}
}

func unsafeBytes[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

func TestLimits(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	s := startServer(t, &Options{MaxSessions: 1, MaxConns: 1, MaxBufferSize: 1 << 16})
	c := dial(t, s.Path())
	if _, err := Dial(s.Path()); !errors.Is(err, ErrLimit) {
		t.Errorf("a second connection over MaxConns: %v, want ErrLimit", err)
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 1 << 17}); !errors.Is(err, ErrLimit) {
		t.Errorf("a buffer over MaxBufferSize: %v, want ErrLimit", err)
	}
	si, err := c.Enable(EnableOptions{Tracepoint: tp.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enable(EnableOptions{Tracepoint: tp.Name()}); !errors.Is(err, ErrLimit) {
		t.Errorf("a session over MaxSessions: %v, want ErrLimit", err)
	}
	// More attachments in the same session are fine, and disabling one
	// keeps the session.
	si, err = c.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: "status == 1", Session: si.ID})
	if err != nil || len(si.Attachments) != 2 {
		t.Fatalf("enable into the session: %+v %v", si, err)
	}
	if a, err := c.DisableAttachment(si.Attachments[0].ID); err != nil || a.ID != si.Attachments[0].ID {
		t.Fatal(a, err)
	}
	_, sessions, _ := c.Stats("")
	if len(sessions) != 1 || len(sessions[0].Attachments) != 1 || sessions[0].Attachments[0].ID != si.Attachments[1].ID {
		t.Errorf("after disabling one attachment: %+v", sessions)
	}
	// A stream nobody reads does not keep Close from returning.
	st, err := c.Stream(si.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		ev := event(uint64(i), 1, "GET", 1)
		tp.Fire(&ev)
	}
	_ = st
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked behind an unread stream")
	}
}

// Closing the server ends its connections, streams and sessions, and
// leaves no goroutine or fd behind.
func TestCloseWithStreams(t *testing.T) {
	_, tps := declare[reqEvent](t, "request")
	tp := tps[0]
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	s, err := Listen(context.Background(), &Options{Path: filepath.Join(t.TempDir(), "s.sock")})
	if err != nil {
		t.Fatal(err)
	}
	var streams []*Stream
	var clients []*Client
	for range 2 {
		c, err := Dial(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		si, err := c.Enable(EnableOptions{Tracepoint: tp.Name()})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Stream(si.ID)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	ev := event(1, 200, "GET", 1)
	tp.Fire(&ev)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if tp.Enabled() {
		t.Error("the server's sessions are still attached after Close")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, st := range streams {
		for {
			_, err := st.Next(ctx)
			if err == nil {
				continue
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("stream %d did not end with the server", i)
			}
			break
		}
	}
	for _, c := range clients {
		c.Close()
	}
	settle(t, goroutines, fds)
}
