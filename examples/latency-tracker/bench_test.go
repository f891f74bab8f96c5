//go:build linux

package tracker_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
	"github.com/uebpf/uebpf/examples/latency-tracker/internal/workload"
)

// getppidLoop is the C loop of internal/workload: a process that makes
// getppid calls when asked and times them itself. C, not Go: the process
// makes exactly the calls it times, with no runtime threads of its own
// waking on the same CPUs, and its figures compare with other tools' runs
// of the same loop.
type getppidLoop struct {
	pid int // its only thread
	in  io.WriteCloser
	out *bufio.Scanner
}

func startLoop(b *testing.B) *getppidLoop {
	cmd := exec.Command(workload.Build(b), "getppid")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	return &getppidLoop{cmd.Process.Pid, in, bufio.NewScanner(out)}
}

// run makes the loop time batches of calls and returns the fastest
// batch's nanoseconds per call.
func (l *getppidLoop) run(b *testing.B, batches, calls int) float64 {
	fmt.Fprintf(l.in, "%d %d\n", batches, calls)
	if !l.out.Scan() {
		b.Fatalf("the getppid loop stopped: %v", l.out.Err())
	}
	ns, err := strconv.ParseFloat(l.out.Text(), 64)
	if err != nil {
		b.Fatal(err)
	}
	return ns
}

// floor is an empty raw_tp sys_enter/sys_exit pair: any program there puts
// every system call of the machine on the kernel's traced path, so it is
// what a tracker's cost is measured against.
type floor struct {
	progs [2]*ebpf.Program
	links []link.Link
}

func newFloor(b *testing.B) *floor {
	var f floor
	for i := range f.progs {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Type: ebpf.RawTracepoint, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close() })
		f.progs[i] = p
	}
	b.Cleanup(func() { f.detach() })
	return &f
}

func (f *floor) attach() error {
	for i, tp := range []string{"sys_enter", "sys_exit"} {
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: tp, Program: f.progs[i]})
		if err != nil {
			return err
		}
		f.links = append(f.links, l)
	}
	return nil
}

func (f *floor) detach() error {
	for _, l := range f.links {
		l.Close()
	}
	f.links = nil
	return nil
}

// BenchmarkGetppid times the C loop's getppid in one configuration per
// sub-benchmark, for profiling one path alone (perf record -a while it
// runs); BenchmarkGetppidInterleaved is the one to compare them with.
func BenchmarkGetppid(b *testing.B) {
	run := func(b *testing.B, loop *getppidLoop) {
		b.ResetTimer()
		b.ReportMetric(loop.run(b, 1, b.N), "ns/call")
	}
	b.Run("nothing", func(b *testing.B) {
		run(b, startLoop(b))
	})
	b.Run("floor", func(b *testing.B) {
		newTracker(b, tracker.Config{}).Close() // skips without privileges
		f := newFloor(b)
		if err := f.attach(); err != nil {
			b.Fatal(err)
		}
		run(b, startLoop(b))
	})
	b.Run("untracked", func(b *testing.B) {
		newTracker(b, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Hour})
		run(b, startLoop(b))
	})
	b.Run("tracked", func(b *testing.B) {
		tr := newTracker(b, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Hour})
		loop := startLoop(b)
		if _, err := tr.Track(loop.pid); err != nil {
			b.Fatal(err)
		}
		run(b, loop)
	})
}

// BenchmarkRingBuffer makes every getppid of P tracked threads a slow call
// (threshold 1ns) while one goroutine reads the events: it reports the
// events delivered per second and the share dropped because the ring
// buffer was full.
func BenchmarkRingBuffer(b *testing.B) {
	cases := []struct {
		name      string
		producers int
		rate      float64 // events/s per producer; 0: as fast as possible
	}{
		{"rate=100k", 1, 100e3}, {"rate=200k", 1, 200e3}, {"rate=400k", 1, 400e3},
		{"producers=1", 1, 0}, {"producers=2", 2, 0},
	}
	for _, bc := range cases {
		producers := bc.producers
		b.Run(bc.name, func(b *testing.B) {
			tr := newTracker(b, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Nanosecond})
			ctx, cancel := context.WithCancel(context.Background())
			var delivered int
			read := make(chan error, 1)
			go func() { read <- tr.ReadEvents(ctx, func(tracker.Event) { delivered++ }) }()

			before, drops0 := slowSent(tr), tr.Drops()
			start := time.Now()
			var wg sync.WaitGroup
			per := b.N / producers
			for p := 0; p < producers; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					tid := unix.Gettid()
					tr.Track(tid)
					t0 := time.Now()
					for i := 0; i < per; i++ {
						if bc.rate > 0 {
							for time.Since(t0) < time.Duration(float64(i)/bc.rate*1e9) {
							}
						}
						unix.Getppid()
					}
					tr.Untrack(tid)
				}()
			}
			wg.Wait()
			sent := slowSent(tr) - before
			for tr.Delivered()+tr.Drops()-drops0 < sent && time.Since(start) < 30*time.Second {
				time.Sleep(time.Millisecond)
			}
			elapsed := time.Since(start)
			cancel()
			if err := <-read; err != nil {
				b.Fatal(err)
			}
			dropped := tr.Drops() - drops0
			b.ReportMetric(float64(sent-dropped)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(dropped)/float64(max(sent, 1))*100, "%dropped")
		})
	}
}

// BenchmarkGetppidInterleaved times the C loop's getppid in five
// configurations, alternated in rounds within one run so that the load of
// a shared machine hits all alike: nothing attached; the floor; the
// tracker with the loop untracked; tracked (threshold 1h: no events);
// tracked with per-process counts (-P). The order rotates every round. It
// reports each configuration's median ns per call and the medians of the
// per-round differences to nothing and to the floor.
func BenchmarkGetppidInterleaved(b *testing.B) {
	tr := newTracker(b, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Hour})
	perProc := newTracker(b, tracker.Config{Policy: tracker.PolicyStatic, Static: time.Hour, GroupBy: tracker.GroupProcess})
	for _, t := range []*tracker.Tracker{tr, perProc} {
		if err := t.Collection().DetachKernel(); err != nil {
			b.Fatal(err)
		}
	}
	loop := startLoop(b)
	f := newFloor(b)
	none := func() error { return nil }
	track := func(t *tracker.Tracker) func() error {
		return func() error {
			if _, err := t.Track(loop.pid); err != nil {
				return err
			}
			return t.Collection().AttachKernel()
		}
	}
	untrack := func(t *tracker.Tracker) func() error {
		return func() error {
			t.Untrack(loop.pid)
			return t.Collection().DetachKernel()
		}
	}
	configs := []struct {
		name       string
		setup, end func() error
	}{
		{"nothing", none, none},
		{"floor", f.attach, f.detach},
		{"untracked", tr.Collection().AttachKernel, tr.Collection().DetachKernel},
		{"tracked", track(tr), untrack(tr)},
		{"tracked-P", track(perProc), untrack(perProc)},
	}
	ns := make([][]float64, len(configs))
	r := 0
	for b.Loop() {
		for k := range configs {
			i := (k + r) % len(configs)
			if err := configs[i].setup(); err != nil {
				b.Fatal(err)
			}
			// The fastest of 20 batches of 250 calls: a batch is short
			// enough (~0.05 ms) that most run without being preempted on a
			// busy machine, and the fastest batch is the cost of the code.
			ns[i] = append(ns[i], loop.run(b, 20, 250))
			if err := configs[i].end(); err != nil {
				b.Fatal(err)
			}
		}
		r++
	}
	if n := perProc.Stats(sysGetppid).Count; n == 0 {
		b.Fatal("the tracked loop's calls were not counted")
	}
	diff := func(i, j int) float64 {
		d := make([]float64, len(ns[i]))
		for k := range d {
			d[k] = ns[i][k] - ns[j][k]
		}
		return median(d)
	}
	for i, c := range configs {
		b.ReportMetric(median(ns[i]), c.name+"-ns")
	}
	b.ReportMetric(diff(1, 0), "floor-over-nothing-ns")
	for i := 2; i < len(configs); i++ {
		b.ReportMetric(diff(i, 1), configs[i].name+"-over-floor-ns")
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchmarkPolicy runs the userspace policy program once over all 512
// syscalls' histograms (in the VM, reading and writing the mmapped kernel
// arrays), after a workload filled some of them.
func BenchmarkPolicy(b *testing.B) {
	for _, p := range []tracker.Policy{tracker.PolicyPercentile, tracker.PolicyStddev} {
		b.Run(p.String(), func(b *testing.B) {
			tr := newTracker(b, tracker.Config{Policy: p, MinSamples: 10})
			func() {
				tid := lockTracked(b, tr)
				defer runtime.UnlockOSThread()
				for i := 0; i < 1000; i++ {
					unix.Getppid()
					unix.Nanosleep(&unix.Timespec{Nsec: 1000}, nil)
				}
				tr.Untrack(tid)
			}()
			for b.Loop() {
				if _, err := tr.UpdateThresholds(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
