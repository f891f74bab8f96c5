// Command floodapp is the application of the recorder's end-to-end tests
// and benchmark: it serves a control socket and, when told to on standard
// input, fires bench:ev (3 × int64 and a 16-byte string) from several
// goroutines as fast as they go, then says what it fired and what its
// sessions recorded, as JSON on standard output, and exits as asked:
// cleanly (quit), at once without closing anything (exit), killed by
// SIGKILL (kill), or not (wait: the next line is read).
//
//	floodapp --socket PATH; then "go N G exit|quit|kill|wait" lines on stdin
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/uebpf/uebpf/control"
	"github.com/uebpf/uebpf/tracepoint"
)

// Event is bench:ev's payload.
type Event struct {
	A, B, C int64
	S       [16]byte
}

var ev = tracepoint.New[Event]("bench", "ev")

// Report is what floodapp prints after a flood.
type Report struct {
	Fired    uint64  `json:"fired"`
	Recorded uint64  `json:"recorded"`
	Dropped  uint64  `json:"dropped"`
	Seconds  float64 `json:"seconds"` // the firing's wall time
}

func main() {
	socket := flag.String("socket", "", "the control socket's path")
	flag.Parse()
	srv, err := control.Listen(context.Background(), &control.Options{Path: *socket})
	if err != nil {
		fmt.Fprintln(os.Stderr, "floodapp:", err)
		os.Exit(1)
	}
	fmt.Println("socket", srv.Path())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "go" {
			fmt.Fprintln(os.Stderr, "floodapp: want: go EVENTS GOROUTINES exit|quit|kill|wait")
			os.Exit(2)
		}
		n, _ := strconv.Atoi(f[1])
		g, _ := strconv.Atoi(f[2])
		json.NewEncoder(os.Stdout).Encode(flood(n, g))
		switch f[3] {
		case "exit": // as a process does at the end of main: nothing closed
			os.Exit(0)
		case "quit":
			srv.Close()
			os.Exit(0)
		case "kill":
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}

// flood fires n events from each of g goroutines; every event has a > 100
// and s "keep-...", what the benchmark's filter keeps.
func flood(n, g int) Report {
	before := ev.Stats()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			e := Event{A: 1000, B: int64(w)}
			copy(e.S[:], "keep-me")
			for i := range n {
				e.C = int64(i)
				ev.Fire(&e)
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	st := ev.Stats()
	return Report{Fired: st.Fired - before.Fired, Recorded: st.Recorded - before.Recorded, Dropped: st.Dropped - before.Dropped, Seconds: d.Seconds()}
}
