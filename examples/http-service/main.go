// Command http-service is an HTTP service instrumented with userspace
// tracepoints: http:request_start and http:request_done fire on every
// request, and cost one atomic load each while nothing is attached.
//
// With --demo it runs a walkthrough in one process: it serves on
// 127.0.0.1:0, attaches the filter
//
//	status >= 500 || duration_us > 20000
//
// to http:request_done in a tracing session, sends a bounded loop of
// requests to itself and prints only the events the filter kept.
//
//	go run ./examples/http-service --demo
//
// With --metrics ADDR it also serves the tracepoints' counters to
// Prometheus on ADDR/metrics; with --control it serves the control socket
// (package control), through which another process lists, enables with a
// filter, streams and disables its tracepoints while it runs. Ctrl-C or
// SIGTERM closes the control socket (removing its file) and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/uebpf/uebpf/control"
	"github.com/uebpf/uebpf/metrics"
	"github.com/uebpf/uebpf/tracepoint"
)

// RequestStart is the payload of http:request_start.
type RequestStart struct {
	Method [8]byte
	Path   [64]byte
}

// RequestDone is the payload of http:request_done.
type RequestDone struct {
	Method     [8]byte
	Path       [64]byte
	Status     uint16
	_          [6]byte
	DurationUs uint64
	Bytes      uint64
}

var (
	reqStart = tracepoint.New[RequestStart]("http", "request_start")
	reqDone  = tracepoint.New[RequestDone]("http", "request_done")
)

// slowFilter keeps failed and slow requests.
const slowFilter = "status >= 500 || duration_us > 20000"

func main() {
	demo := flag.Bool("demo", false, "run the in-process walkthrough and exit")
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on")
	requests := flag.Int("requests", 40, "requests the walkthrough sends")
	metricsAddr := flag.String("metrics", "", "serve Prometheus metrics (tracepoint counters) on this address, e.g. :9090")
	ctl := flag.Bool("control", false, "serve the control socket: tracepoints enabled and streamed from another terminal (uebpf trace)")
	flag.Parse()
	if *demo {
		exit(runDemo(os.Stdout, *requests))
	}
	exit(run(*addr, *metricsAddr, *ctl))
}

// run serves until SIGINT or SIGTERM. The signal closes the control
// server, which removes its socket file rather than leaving it to the
// next server's sweep.
func run(addr, metricsAddr string, ctl bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if metricsAddr != "" {
		ln, err := serveMetrics(metricsAddr)
		if err != nil {
			return err
		}
		fmt.Println("metrics on http://" + ln.Addr().String() + "/metrics")
	}
	if ctl {
		srv, err := control.Listen(ctx, nil)
		if err != nil {
			return err
		}
		defer srv.Close()
		fmt.Println("control socket", srv.Path())
	}
	return serve(ctx, addr)
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "http-service:", err)
		os.Exit(1)
	}
}

// serve serves the service on addr until ctx is done.
func serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("serving on", ln.Addr())
	srv := &http.Server{Handler: handler()}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveMetrics serves /metrics on addr in the background: the counters of
// every tracepoint (fired, matched, recorded, dropped, errors), which
// count while something is attached.
func serveMetrics(addr string) (net.Listener, error) {
	return metrics.Serve(addr, metrics.Tracepoints())
}

// handler is the service: /ok answers at once, /slow after 25 ms, /fail
// with a 500, anything else 404; every request fires the tracepoints.
func handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(25 * time.Millisecond)
		io.WriteString(w, "slow\n")
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "failed", http.StatusInternalServerError)
	})
	return instrument(mux)
}

// instrument fires http:request_start and http:request_done around next.
func instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if reqStart.Enabled() { // building the payload costs more than firing
			var ev RequestStart
			copy(ev.Method[:], r.Method)
			copy(ev.Path[:], r.URL.Path)
			reqStart.Fire(&ev)
		}
		rw := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rw, r)
		if reqDone.Enabled() {
			ev := RequestDone{Status: uint16(rw.status), DurationUs: uint64(time.Since(start).Microseconds()), Bytes: rw.bytes}
			copy(ev.Method[:], r.Method)
			copy(ev.Path[:], r.URL.Path)
			reqDone.Fire(&ev)
		}
	})
}

// recorder remembers the status and counts the bytes of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  uint64
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.bytes += uint64(n)
	return n, err
}

// runDemo serves, attaches the filter and sends n requests, printing the
// events the filter kept.
func runDemo(w io.Writer, n int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler()}
	go srv.Serve(ln)
	defer srv.Close()

	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 16})
	if err != nil {
		return err
	}
	defer s.Close()
	link, err := s.Enable(reqDone, tracepoint.Filter(slowFilter))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "attached %q to %s\n", slowFilter, reqDone.Name())

	paths := []string{"/ok", "/ok", "/missing", "/fail", "/ok", "/slow", "/ok", "/ok"}
	base := "http://" + ln.Addr().String()
	for i := range n {
		resp, err := http.Get(base + paths[i%len(paths)])
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	link.Close()

	s.SetDeadline(time.Now())
	for {
		rec, err := s.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			return err
		}
		ev, err := tracepoint.Decode[RequestDone](rec)
		if err != nil {
			return err
		}
		why := "slow"
		if ev.Status >= 500 {
			why = "failed"
		}
		fmt.Fprintf(w, "%s %s status=%d bytes=%d (%s)\n", cstr(ev.Method[:]), cstr(ev.Path[:]), ev.Status, ev.Bytes, why)
	}
	st := reqDone.Stats()
	fmt.Fprintf(w, "%d requests, %d kept, %d dropped\n", st.Fired, st.Recorded, st.Dropped)
	return nil
}

// cstr is a NUL-terminated string field as a Go string.
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
