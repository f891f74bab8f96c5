package tracepoint_test

import (
	"fmt"
	"os"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// Query is the payload of the example's tracepoint.
type Query struct {
	Table   [16]byte
	Rows    uint32
	Error   bool
	_       [3]byte
	Elapsed uint64 `tracepoint:"elapsed_us"`
}

var queryDone = tracepoint.New[Query]("db", "query_done")

func Example() {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 16})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// Record failed queries and slow ones on the users table.
	link, err := s.Enable(queryDone, tracepoint.Filter(`error || (table == "users" && elapsed_us > 1000)`))
	if err != nil {
		panic(err)
	}
	defer link.Close()

	for i, q := range []struct {
		table   string
		elapsed uint64
		failed  bool
	}{{"users", 50, false}, {"users", 5000, false}, {"orders", 9000, false}, {"orders", 10, true}} {
		ev := Query{Rows: uint32(i), Error: q.failed, Elapsed: q.elapsed}
		copy(ev.Table[:], q.table)
		queryDone.Fire(&ev)
	}

	s.SetDeadline(time.Now())
	for {
		rec, err := s.Next()
		if err != nil {
			break // os.ErrDeadlineExceeded: nothing more
		}
		q, _ := tracepoint.Decode[Query](rec)
		fmt.Printf("%s: rows=%d error=%v elapsed=%dus pid ok=%v\n",
			rec.Tracepoint.Name(), q.Rows, q.Error, q.Elapsed, rec.Context.Vpid == int64(os.Getpid()))
	}
	fmt.Printf("%+v\n", queryDone.Stats())
	// Output:
	// db:query_done: rows=1 error=false elapsed=5000us pid ok=true
	// db:query_done: rows=3 error=true elapsed=10us pid ok=true
	// {Fired:4 Matched:2 Recorded:2 Dropped:0 Errors:0}
}

func ExampleList() {
	for _, tp := range tracepoint.List() {
		if tp.Name() != "db:query_done" {
			continue
		}
		for _, f := range tp.Info().Fields {
			fmt.Printf("%s %v size=%d offset=%d\n", f.Name, f.Kind, f.Size, f.Offset)
		}
	}
	// Output:
	// table string size=16 offset=0
	// rows unsigned size=4 offset=16
	// error bool size=1 offset=20
	// elapsed_us unsigned size=8 offset=24
}
