//go:build linux

// Command inapp is the in-application side of the latency tracker: a small
// request server instrumented with uebpf. Each worker thread marks itself
// tracked (through the UeBPF program uebpf/register, which sets a bit in a
// map the kernel programs read) while it serves a request and untracked
// while it waits for the next one, so only the system calls made on behalf
// of requests are measured, and slow ones are reported with the request
// still running. Needs root.
//
//	inapp --workers 4 --duration 5s --slow-every 50000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

func main() {
	workers := flag.Int("workers", 4, "request-serving threads")
	duration := flag.Duration("duration", 5*time.Second, "how long to serve")
	slowEvery := flag.Int("slow-every", 50000, "every n-th request makes a slow call (20ms sleep)")
	flag.Parse()
	if err := run(*workers, *duration, *slowEvery); err != nil {
		fmt.Fprintln(os.Stderr, "inapp:", err)
		os.Exit(1)
	}
}

func run(workers int, duration time.Duration, slowEvery int) error {
	tr, err := tracker.New(tracker.Config{Policy: tracker.PolicyPercentile, Floor: 50 * time.Microsecond})
	if err != nil {
		return err
	}
	defer tr.Close()

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	go tr.ReadEvents(ctx, func(e tracker.Event) {
		fmt.Printf("slow: %s\n", tracker.FormatEvent(e))
	})
	go func() { // the policy adapts the thresholds every 200ms
		for t := time.NewTicker(200 * time.Millisecond); ctx.Err() == nil; <-t.C {
			tr.UpdateThresholds()
		}
	}()

	requests := make(chan int)
	var served atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(tr, requests, slowEvery, &served)
		}()
	}
	fmt.Printf("serving with %d worker threads for %v\n", workers, duration)
	for i := 0; ctx.Err() == nil; i++ {
		requests <- i
	}
	close(requests)
	wg.Wait()
	fmt.Printf("\n%d requests served; only their system calls were measured:\n", served.Load())
	snap := tr.Snapshot()
	tracker.WriteTable(os.Stdout, tr.Rows(snap, snap.Top(0, nil)), tracker.Auto)
	fmt.Printf("%s reported, %d dropped\n", tracker.Plural(tr.Delivered(), "slow call"), tr.Drops())
	return nil
}

// worker serves requests on its own OS thread, tracked only while serving.
func worker(tr *tracker.Tracker, requests <-chan int, slowEvery int, served *atomic.Int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	null, err := unix.Open("/dev/null", unix.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inapp:", err)
		return
	}
	defer unix.Close(null)
	buf := []byte("response\n")
	var st unix.Stat_t
	for req := range requests {
		tr.Track(tid) // "serving a request"
		unix.Getppid()
		unix.Stat("/etc/hostname", &st)
		unix.Write(null, buf)
		if slowEvery > 0 && req%slowEvery == slowEvery-1 {
			unix.Nanosleep(&unix.Timespec{Nsec: int64(20 * time.Millisecond)}, nil)
		}
		tr.Untrack(tid) // idle: waiting for work is not interesting
		served.Add(1)
	}
}
