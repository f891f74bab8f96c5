//go:build linux

package control_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/uebpf/uebpf/control"
	"github.com/uebpf/uebpf/tracepoint"
)

// Query is the payload of the example's tracepoint.
type Query struct {
	Rows  uint32
	Error bool
	_     [3]byte
}

var queryDone = tracepoint.New[Query]("example", "query_done")

func Example() {
	dir, err := os.MkdirTemp("", "control-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The application: one call. (Without Options.Path, the socket is
	// named by its pid in the runtime directory.)
	srv, err := control.Listen(ctx, &control.Options{Path: filepath.Join(dir, "app.sock")})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// A tool, usually another process: enable a filter, stream.
	c, err := control.Dial(srv.Path())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	session, err := c.Enable(control.EnableOptions{Tracepoint: "example:*", Filter: "error || rows > 100"})
	if err != nil {
		panic(err)
	}
	stream, err := c.Stream(session.ID)
	if err != nil {
		panic(err)
	}

	for _, q := range []Query{{Rows: 5}, {Rows: 500}, {Rows: 7, Error: true}} {
		queryDone.Fire(&q)
	}
	for range 2 {
		e, err := stream.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(e.Tracepoint, e.Fields)
	}
	list, _, _ := c.Stats("example:*")
	fmt.Printf("%s: %+v\n", list[0].Name, list[0].Stats)
	if _, err := c.Disable(session.ID); err != nil {
		panic(err)
	}
	// Output:
	// example:query_done rows=500 error=false
	// example:query_done rows=7 error=true
	// example:query_done: {Fired:3 Matched:2 Recorded:2 Dropped:0 Errors:0}
}

// An application writes the events of its own session as JSON lines,
// here to standard output, until its context ends.
func ExampleWriteJSON() {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 16})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.Enable(queryDone, tracepoint.Filter("rows >= 1000")); err != nil {
		panic(err)
	}
	for _, q := range []Query{{Rows: 5}, {Rows: 1200}} {
		queryDone.Fire(&q)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	if err := control.WriteJSON(ctx, s, &out); err != nil {
		panic(err)
	}
	var e control.Event
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		panic(err)
	}
	fmt.Println(e.Tracepoint, e.Fields)
	// Output:
	// example:query_done rows=1200 error=false
}

// A tool records an application's session, reached through its control
// socket, as a CTF trace that babeltrace2 and Trace Compass read.
func ExampleClient_Record() {
	dir, err := os.MkdirTemp("", "control-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	srv, err := control.Listen(context.Background(), &control.Options{Path: filepath.Join(dir, "app.sock")})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c, err := control.Dial(srv.Path())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	session, err := c.Enable(control.EnableOptions{Tracepoint: "example:query_done", Filter: "error"})
	if err != nil {
		panic(err)
	}
	queryDone.Fire(&Query{Rows: 3, Error: true})

	// Record until ctx ends (a tool waits for Ctrl-C), then close the trace.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	st, err := c.Record(ctx, session.ID, filepath.Join(dir, "trace"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d event, %d dropped\n", st.Events, st.Dropped)
	// Output:
	// 1 event, 0 dropped
}
