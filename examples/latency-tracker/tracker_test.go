//go:build linux

package tracker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

const (
	sysRead      = 0
	sysWrite     = 1
	sysNanosleep = 35
	sysGetppid   = 110
)

func newTracker(tb testing.TB, cfg tracker.Config) *tracker.Tracker {
	tb.Helper()
	tr, err := tracker.New(cfg)
	if errors.Is(err, tracker.ErrPermission) {
		tb.Skip("kernel BPF not available (needs root or CAP_BPF+CAP_PERFMON)")
	}
	if errors.Is(err, tracker.ErrNoTracefs) {
		tb.Skip("tracefs is not mounted: the tracker's tracepoints cannot be attached")
	}
	if errors.Is(err, tracker.ErrNoBTF) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tr.Close() })
	return tr
}

// collector gathers the tracker's events in the background.
type collector struct {
	mu     sync.Mutex
	events []tracker.Event
	cancel context.CancelFunc
	done   chan error
}

func collect(tr *tracker.Tracker) *collector {
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{cancel: cancel, done: make(chan error, 1)}
	go func() {
		c.done <- tr.ReadEvents(ctx, func(e tracker.Event) {
			c.mu.Lock()
			c.events = append(c.events, e)
			c.mu.Unlock()
		})
	}()
	return c
}

// take returns and forgets the events so far, once the ring is drained.
func (c *collector) take(tr *tracker.Tracker, sent uint64) []tracker.Event {
	deadline := time.Now().Add(5 * time.Second)
	for tr.Delivered()+tr.Drops() < sent && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events
	c.events = nil
	return ev
}

func (c *collector) stop(t *testing.T) {
	c.cancel()
	if err := <-c.done; err != nil {
		t.Error(err)
	}
}

// slowSent is the number of slow calls the kernel side saw so far.
func slowSent(tr *tracker.Tracker) uint64 {
	var n uint64
	for nr := uint32(0); nr < tracker.NumSyscalls; nr++ {
		n += tr.Stats(nr).Slow
	}
	return n
}

// lockTracked locks the goroutine to its thread and tracks the thread.
func lockTracked(t testing.TB, tr *tracker.Tracker) int {
	runtime.LockOSThread()
	tid := unix.Gettid()
	if _, err := tr.Track(tid); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Untrack(tid) })
	return tid
}

// waitInRead waits until thread tid is in a read system call.
func waitInRead(tid int) {
	path := fmt.Sprintf("/proc/self/task/%d/syscall", tid)
	for i := 0; i < 5000; i++ {
		if b, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(b), "0 ") {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// A threshold a UeBPF program sets is the one the kernel program applies
// on the very next system call.
func TestThresholdNextSyscall(t *testing.T) {
	tr := newTracker(t, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Hour})
	for _, name := range []string{"policy", "register_id"} {
		if !tr.Collection().Program(name).Verified() {
			t.Errorf("userspace program %s is not verified", name)
		}
	}
	c := collect(tr)
	defer c.stop(t)
	tid := lockTracked(t, tr)
	defer runtime.UnlockOSThread()

	slow := func() uint64 { return tr.Stats(sysGetppid).Slow }
	count := func() uint64 { return tr.Stats(sysGetppid).Count }
	for round := 0; round < 3; round++ {
		before, n := slow(), count()
		unix.Getppid()
		if slow() != before || count() != n+1 {
			t.Fatalf("round %d: threshold 1h: getppid counted %d times, %d slow; want 1, 0", round, count()-n, slow()-before)
		}
		// The policy program (in the VM) writes the thresholds; the very
		// next getppid is judged by the new one.
		if err := tr.SetStatic(time.Nanosecond); err != nil {
			t.Fatal(err)
		}
		if got := tr.Threshold(sysGetppid); got != time.Nanosecond {
			t.Fatalf("threshold after SetStatic(1ns) is %v", got)
		}
		unix.Getppid()
		if got := slow() - before; got != 1 {
			t.Fatalf("round %d: the getppid right after the threshold change: %d slow, want 1", round, got)
		}
		if err := tr.SetStatic(time.Hour); err != nil {
			t.Fatal(err)
		}
		unix.Getppid()
		if got := slow() - before; got != 1 {
			t.Fatalf("round %d: getppid after the threshold went back to 1h was slow", round)
		}
	}
	var got int
	for _, e := range c.take(tr, slowSent(tr)) {
		if e.Syscall == sysGetppid {
			got++
			if e.TID != uint32(tid) || e.Threshold != time.Nanosecond || e.Latency <= 0 {
				t.Errorf("event %+v: want tid %d, threshold 1ns", e, tid)
			}
		}
	}
	if got != 3 {
		t.Errorf("%d getppid events, want 3", got)
	}
}

// The tracker against a workload of many fast calls and a few slow ones of
// known length: the slow ones are reported with the right syscall and
// latency, the fast ones are not once thresholds adapted, and thresholds
// differ per syscall.
func TestEndToEnd(t *testing.T) {
	const (
		delay = 50 * time.Millisecond
		nap   = 100 * time.Microsecond
	)
	tr := newTracker(t, tracker.Config{
		Policy: tracker.PolicyPercentile, Percentile: 90, Factor: 4,
		Floor: 200 * time.Microsecond, MinSamples: 200, Initial: 10 * time.Millisecond,
	})
	c := collect(tr)
	defer c.stop(t)

	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil { // blocking
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 1)

	tid := lockTracked(t, tr)
	defer runtime.UnlockOSThread()
	fast := func(n int) int {
		calls := 0
		for i := 0; i < n; i++ {
			for j := 0; j < 10; j++ {
				unix.Getppid()
			}
			unix.Nanosleep(&unix.Timespec{Nsec: int64(nap)}, nil)
			unix.Write(p[1], buf)
			unix.Read(p[0], buf)
			calls += 13
		}
		return calls
	}

	// Warm up, then let the policy program adapt.
	fast(1000)
	if _, err := tr.UpdateThresholds(); err != nil {
		t.Fatal(err)
	}
	c.take(tr, slowSent(tr))
	thr := map[string]time.Duration{}
	for _, nr := range []uint32{sysGetppid, sysNanosleep, sysRead} {
		thr[tracker.SyscallName(nr)] = tr.Threshold(nr)
	}
	t.Logf("adapted thresholds: %v", thr)
	if thr["getppid"] == thr["nanosleep"] || thr["nanosleep"] <= nap || thr["nanosleep"] >= delay {
		t.Errorf("thresholds %v: want nanosleep's above its %v naps and below %v, and not getppid's", thr, nap, delay)
	}

	// Fast calls with a few slow ones, whose times we note.
	type window struct {
		nr       uint32
		from, to time.Time
	}
	var deliberate []window
	fastCalls := 0
	for i := 0; i < 3; i++ {
		fastCalls += fast(300)
		w := window{nr: sysNanosleep, from: time.Now()}
		unix.Nanosleep(&unix.Timespec{Nsec: int64(delay)}, nil)
		w.to = time.Now()
		deliberate = append(deliberate, w)
		go func() {
			// Count the delay from when the reader is blocked in read.
			waitInRead(tid)
			time.Sleep(delay)
			unix.Write(p[1], []byte{1})
		}()
		w = window{nr: sysRead, from: time.Now()}
		unix.Read(p[0], buf) // blocks until the write
		w.to = time.Now()
		deliberate = append(deliberate, w)
	}
	fastCalls += fast(300)
	events := c.take(tr, slowSent(tr))

	// Event times come from the kernel's monotonic clock, converted once.
	const slack = 200 * time.Microsecond
	found := make([]bool, len(deliberate))
	var fastReported, napsReported []tracker.Event
	for _, e := range events {
		if e.Latency <= e.Threshold {
			t.Errorf("event %+v: latency below its threshold", e)
		}
		mine := false
		for i, w := range deliberate {
			start := e.Time.Add(-e.Latency)
			// A fast call right next to the window, slow because the
			// machine is loaded, may fall in it too (the clocks' offset
			// is only known to a few hundred µs then): a deliberate call
			// is one of at least half its delay.
			if e.Syscall == w.nr && e.Latency >= delay/2 && !start.Before(w.from.Add(-slack)) && !e.Time.After(w.to.Add(slack)) {
				mine, found[i] = true, true
				if e.Latency < delay {
					t.Errorf("%s of %v reported with latency %v", tracker.SyscallName(w.nr), delay, e.Latency)
				}
				if e.Threshold >= delay {
					t.Errorf("event %+v: threshold not adapted", e)
				}
			}
		}
		switch {
		case mine:
		case e.Syscall == sysNanosleep:
			napsReported = append(napsReported, e)
		case e.Syscall == sysGetppid || e.Syscall == sysRead || e.Syscall == sysWrite:
			fastReported = append(fastReported, e)
		}
	}
	for i, w := range deliberate {
		if !found[i] {
			t.Errorf("slow %s (%v) not reported; events: %+v", tracker.SyscallName(w.nr), delay, events)
		}
	}
	// A fast call can really be slow once in a while (the thread was
	// preempted on a busy machine): allow a few, never a flood. The same
	// for the 100µs naps, which overrun by milliseconds when the machine is
	// loaded, and are then rightly reported.
	naps := fastCalls / 13
	if len(fastReported) > fastCalls/1000 {
		t.Errorf("%d of %d fast calls reported: %+v", len(fastReported), fastCalls, fastReported)
	}
	if len(napsReported) > naps/10 {
		t.Errorf("%d of %d naps reported: %+v", len(napsReported), naps, napsReported)
	}
	for _, e := range append(fastReported, napsReported...) {
		t.Logf("reported: %s %v > %v", tracker.SyscallName(e.Syscall), e.Latency, e.Threshold)
	}
}

// Past the ring buffer's capacity, slow calls are counted as drops: every
// one is either delivered or dropped, and nothing breaks.
func TestRingBufferOverflow(t *testing.T) {
	tr := newTracker(t, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Nanosecond, RingSize: 4096})
	func() {
		tid := lockTracked(t, tr)
		defer runtime.UnlockOSThread()
		for i := 0; i < 10000; i++ {
			unix.Getppid()
		}
		tr.Untrack(tid)
	}()
	sent := slowSent(tr)
	c := collect(tr)
	events := c.take(tr, sent)
	c.stop(t)
	if tr.Drops() == 0 {
		t.Errorf("no drops after %d events into a 4 KiB ring", sent)
	}
	if got := uint64(len(events)) + tr.Drops(); got != sent {
		t.Errorf("%d delivered + %d dropped = %d, want the %d slow calls", len(events), tr.Drops(), got, sent)
	}
	t.Logf("%d slow calls: %d delivered, %d dropped", sent, len(events), tr.Drops())
}
