package control

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStream measures events a client streams: recorded by a session
// into its channel, read by the client from its mapping of the channel
// and decoded into Events.
// "lossless" fires bursts no larger than the ring and waits for the
// client to receive them: the throughput with no drop. "flood" fires as
// fast as one goroutine can, and counts what the ring had no room for.
func BenchmarkStream(b *testing.B) {
	for _, bc := range []struct {
		name  string
		burst int // 0: no waiting
	}{{"lossless", 4096}, {"flood", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			_, tps := declare[reqEvent](b, "request")
			tp := tps[0]
			s := startServer(b, nil)
			c := dial(b, s.Path())
			si, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), BufferSize: 16 << 20})
			if err != nil {
				b.Fatal(err)
			}
			st, err := c.Stream(si.ID)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			received := 0
			read := func(until int) {
				for received < until {
					if _, err := st.Next(ctx); err != nil {
						b.Fatalf("after %d events: %v", received, err)
					}
					received++
				}
			}
			ev := event(1, 200, "GET", 10)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			done := make(chan struct{})
			if bc.burst == 0 {
				go func() {
					defer close(done)
					for range b.N {
						tp.Fire(&ev)
					}
				}()
				<-done
				// Every event is either in the ring or counted dropped.
				read(b.N - int(tp.Stats().Dropped))
			} else {
				for i := 0; i < b.N; i += bc.burst {
					n := min(bc.burst, b.N-i)
					for range n {
						tp.Fire(&ev)
					}
					read(i + n)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			dropped := tp.Stats().Dropped
			if uint64(received)+dropped != uint64(b.N) {
				b.Fatalf("%d received + %d dropped != %d fired", received, dropped, b.N)
			}
			b.ReportMetric(float64(received)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(dropped), "dropped")
			b.ReportMetric(float64(dropped)/float64(b.N)*100, "drop%")
			c.Disable(si.ID)
		})
	}
}

// BenchmarkFire measures what a session enabled through the socket adds
// to Fire: nothing attached, a filter that drops the event, and a
// session recording every event while a client streams them (drops
// counted: a firing then costs the attempt).
func BenchmarkFire(b *testing.B) {
	for _, bc := range []struct {
		name   string
		filter string
		enable bool
		stream bool
	}{
		{"nothing attached", "", false, false},
		{"filter drops", "status == 999", true, false},
		{"filter keeps, streamed", "status == 200", true, true},
		{"records all, streamed", "", true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, tps := declare[reqEvent](b, "request")
			tp := tps[0]
			s := startServer(b, nil)
			c := dial(b, s.Path())
			if bc.enable {
				si, err := c.Enable(EnableOptions{Tracepoint: tp.Name(), Filter: bc.filter, BufferSize: 16 << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Disable(si.ID)
				if bc.stream {
					st, err := c.Stream(si.ID)
					if err != nil {
						b.Fatal(err)
					}
					go func() {
						for {
							if _, err := st.Next(context.Background()); err != nil {
								return
							}
						}
					}()
				}
			}
			ev := event(1, 200, "GET", 10)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				tp.Fire(&ev)
			}
			b.StopTimer()
			if st := tp.Stats(); st.Matched > 0 {
				b.ReportMetric(float64(st.Dropped)/float64(st.Matched)*100, "drop%")
			}
		})
	}
}
