package filter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/tracepoint"
)

// hostileEvent is the payload of the tracepoint the hostile expressions
// are attached to: the fields of limitSpec.
type hostileEvent struct {
	Name  [1024]byte
	Other [1024]byte
	Tag   [16]byte
	A     uint32
	G     float32
}

var hostilePoint = sync.OnceValues(func() (*tracepoint.Tracepoint[hostileEvent], error) {
	return tracepoint.Declare[hostileEvent]("filtertest", "hostile")
})

// hostileCases are expressions a client of the control socket could send
// to make the traced application compile, verify and JIT gigabytes of
// code; each must be refused by the limit named.
var hostileCases = []struct{ name, expr, limit string }{
	// The finding: 51 KB over a string[1024] took 46 s and 4.6 GB.
	{"or-globs-51k", repeatTo(51200, `name == "*ab*"`, " || "), "MaxInstructions"},
	{"glob-stars-51k", `name == "` + strings.Repeat("*a", 25600) + `"`, "MaxGlobStars"},
	{"glob-32-stars", `name == "` + strings.Repeat("*ab", 32) + `"`, "MaxInstructions"},
	{"glob-literal-51k", `name == "*` + strings.Repeat("a", 51200) + `*"`, "MaxLiteralBytes"},
	{"or-fields-51k", repeatTo(51200, "name < other", " || "), "MaxInstructions"},
	{"or-literals-51k", repeatTo(51200, `name == "`+strings.Repeat("x", 1000)+`"`, " || "), "MaxInstructions"},
	{"or-floats-8k", repeatTo(8000, "g < 1.5 || g > a", " || "), "MaxInstructions"},
	{"or-floats-51k", repeatTo(51200, "g < 1.5 || g > a", " || "), "MaxNodes"},
	{"bytes-1M", repeatTo(1<<20, "a == 1", " || "), "MaxBytes"},
	{"parens-51k", strings.Repeat("(", 25600) + "a" + strings.Repeat(")", 25600), "MaxDepth"},
	{"nots-51k", strings.Repeat("!", 51200) + "a", "MaxDepth"},
	{"nodes-51k", repeatTo(51200, "a", "|"), "MaxNodes"},
}

// hostileEnv names the case a child process runs.
const hostileEnv = "UEBPF_FILTER_HOSTILE"

// hostileResult is what a child reports.
type hostileResult struct {
	Err     string
	Limit   bool   // the error wraps filter.ErrLimit
	Alloc   uint64 // bytes allocated while refusing
	HeapSys uint64 // the heap's size afterwards
	Ns      int64
}

func TestMain(m *testing.M) {
	if name := os.Getenv(hostileEnv); name != "" {
		os.Exit(hostileChild(name))
	}
	os.Exit(m.Run())
}

// hostileChild attaches case name's filter to a tracepoint, as the
// control socket's enable request does, and prints how it went. A
// watchdog ends the process should the heap pass 512 MiB: the test then
// fails without exhausting the machine.
func hostileChild(name string) int {
	i := 0
	for i < len(hostileCases) && hostileCases[i].name != name {
		i++
	}
	if i == len(hostileCases) {
		fmt.Fprintf(os.Stderr, "no case %q\n", name)
		return 2
	}
	tp, err := hostilePoint()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if n := s[0].Value.Uint64(); n > 512<<20 {
				fmt.Fprintf(os.Stderr, "watchdog: heap of %d MiB\n", n>>20)
				os.Exit(3)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	a, err := tracepoint.Attach(tp, tracepoint.Filter(hostileCases[i].expr))
	ns := time.Since(start).Nanoseconds()
	runtime.ReadMemStats(&after)
	if err == nil {
		a.Close()
		err = errors.New("accepted")
	}
	json.NewEncoder(os.Stdout).Encode(hostileResult{
		Err: err.Error(), Limit: errors.Is(err, filter.ErrLimit),
		Alloc: after.TotalAlloc - before.TotalAlloc, HeapSys: after.HeapSys, Ns: ns,
	})
	return 0
}

// Each hostile expression is refused by its limit using at most 64 MiB,
// in a child process so that a limit that fails cannot take the test
// binary down. (BenchmarkRefuse times the refusals.)
func TestHostileInChild(t *testing.T) {
	for _, tc := range hostileCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), hostileEnv+"="+tc.name)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v: %s", err, stderr.String())
			}
			var r hostileResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("child said %q: %v", out, err)
			}
			if !r.Limit || !strings.Contains(r.Err, "filter.Limits."+tc.limit) {
				t.Errorf("%.200s\nwant a refusal by Limits.%s", r.Err, tc.limit)
			}
			if len(r.Err) > 1000 {
				t.Errorf("an error of %d bytes: the expression is quoted whole", len(r.Err))
			}
			if r.Alloc > 64<<20 || r.HeapSys > 64<<20 {
				t.Errorf("allocated %d KiB, heap of %d KiB: want at most 64 MiB", r.Alloc>>10, r.HeapSys>>10)
			}
			t.Logf("%d bytes: %.0f µs, %d KiB allocated: %.120s", len(tc.expr), float64(r.Ns)/1e3, r.Alloc>>10, r.Err)
		})
	}
}

// BenchmarkRefuse times the refusal of each hostile expression by
// Compile, and its allocations: at most 100 ms and 64 MiB.
func BenchmarkRefuse(b *testing.B) {
	fields := limitFields(b)
	for _, tc := range hostileCases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := filter.Compile(tc.expr, fields); !errors.Is(err, filter.ErrLimit) {
					b.Fatalf("%.100v", err)
				}
			}
		})
	}
}

// largest returns the longest expression of parts that the default
// limits accept, before the first count they refuse.
func largest(fields []filter.Field, part func(n int) string) string {
	ok := func(n int) bool { _, err := filter.Compile(part(n), fields); return err == nil }
	hi := 2
	for ok(hi) {
		hi *= 2
	}
	lo := hi / 2 // accepted, and hi is not
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return part(lo)
}

// worstAccepted are the filters just under the limits that cost the
// most to verify and compile, by shape.
func worstAccepted(tb testing.TB) []struct{ name, expr string } {
	fields := limitFields(tb)
	or := func(p string) func(int) string {
		return func(n int) string { return strings.Repeat(p+" || ", n-1) + p }
	}
	var out []struct{ name, expr string }
	for _, s := range []struct {
		name string
		part func(int) string
	}{
		{"glob-1024", func(n int) string { return `name == "*` + strings.Repeat("ab", n)[:n] + `*"` }},
		{"or-globs-1024", or(`name == "*ab*"`)},
		{"or-fields-1024", or("name < other")},
		{"or-globs-16", or(`tag == "*a*b*"`)},
		{"or-f32", or("g < 1.5 || g > a")},
		{"and-f32", func(n int) string { return strings.Repeat("g != 1.5 && ", n-1) + "g != a" }},
		{"or-ints", or("a == 7")},
	} {
		out = append(out, struct{ name, expr string }{s.name, largest(fields, s.part)})
	}
	return out
}

// BenchmarkWorstAccepted attaches the largest filters the limits accept
// to a tracepoint, as the control socket's enable request does: compile,
// verification for the tracepoint's record and JIT.
func BenchmarkWorstAccepted(b *testing.B) {
	tp, err := hostilePoint()
	if err != nil {
		b.Fatal(err)
	}
	fields := limitFields(b)
	for _, w := range worstAccepted(b) {
		f, err := filter.Compile(w.expr, fields)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ReportMetric(float64(len(f.Instructions())), "insns")
			for b.Loop() {
				a, err := tracepoint.Attach(tp, tracepoint.Filter(w.expr))
				if err != nil {
					b.Fatal(err)
				}
				a.Close()
			}
		})
	}
}
