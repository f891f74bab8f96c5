package ctf_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// Request is the payload of the example's tracepoint.
type Request struct {
	Method     [8]byte
	Status     uint16
	_          [6]byte
	DurationUs uint64
}

var requestDone = tracepoint.New[Request]("ctfexample", "request_done")

func Example() {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 16})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.Enable(requestDone, tracepoint.Filter("status >= 500")); err != nil {
		panic(err)
	}
	tmp, err := os.MkdirTemp("", "ctf-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "trace")

	// Record until cancel; the trace is complete when Record returns.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := ctf.Record(ctx, s, dir); done <- err }()
	for i, status := range []uint16{200, 503, 404, 500} {
		ev := Request{Status: status, DurationUs: uint64(100 * i)}
		copy(ev.Method[:], "GET")
		requestDone.Fire(&ev)
	}
	cancel()
	if err := <-done; err != nil {
		panic(err)
	}

	// babeltrace2 dir prints the two events kept, from the stream files
	// of the rings they were in (stream_0, stream_1, ...); the metadata
	// declares the tracepoint as:
	f, _ := os.Open(filepath.Join(dir, ctf.MetadataFile))
	defer f.Close()
	print := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		print = print || sc.Text() == "event {"
		if print {
			fmt.Println(strings.ReplaceAll(sc.Text(), "\t", "  "))
		}
	}
	// Output:
	// event {
	//   name = "ctfexample:request_done";
	//   id = 0;
	//   stream_id = 0;
	//   fields := struct {
	//     integer { size = 8; align = 8; signed = false; encoding = UTF8; } _method[8];
	//     integer { size = 16; align = 16; signed = false; } _status;
	//     integer { size = 64; align = 64; signed = false; } _duration_us;
	//   };
	// };
}
