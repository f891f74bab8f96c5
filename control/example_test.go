//go:build linux

package control_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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
	if err := c.Disable(session.ID); err != nil {
		panic(err)
	}
	// Output:
	// example:query_done rows=500 error=false
	// example:query_done rows=7 error=true
	// example:query_done: {Fired:3 Matched:2 Recorded:2 Dropped:0 Errors:0}
}
