package tracepoint

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// benchEvent is the payload of the HTTP example: 96 bytes.
type benchEvent struct {
	Method     [8]byte
	Path       [64]byte
	Status     uint16
	_          [6]byte
	DurationUs uint64
	Bytes      uint64
}

func BenchmarkFireDisabled(b *testing.B) {
	tp := declare[benchEvent](b)
	ev := benchEvent{Status: 200}
	// b.N loops, not b.Loop: b.Loop keeps calls in its body from being
	// inlined, and inlining is what makes a disabled Fire cheap.
	b.Run("pointer", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tp.Fire(&ev)
		}
	})
	b.Run("value", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tp.FireValue(ev)
		}
	})
}

// fourPredicates is the filter of the enabled benchmarks.
const fourPredicates = "status >= 500 || duration_us > 20000 || bytes > 1048576 || status == 404"

func BenchmarkFireEnabled(b *testing.B) {
	for _, engine := range []struct {
		name string
		opts []Option
	}{{"jit", nil}, {"interpreter", []Option{Interpreted()}}} {
		b.Run(engine.name+"/dropped", func(b *testing.B) {
			tp := declare[benchEvent](b)
			s := newSession(b, 1<<20)
			if _, err := s.Enable(tp, append(engine.opts, Filter(fourPredicates))...); err != nil {
				b.Fatal(err)
			}
			ev := benchEvent{Status: 200, DurationUs: 100, Bytes: 10}
			b.ReportAllocs()
			cpu := -processCPU()
			// b.N, not b.Loop, as in BenchmarkFireDisabled: Fire inlines
			// at real call sites, and b.Loop's body would call it.
			for range b.N {
				tp.Fire(&ev)
			}
			cpu += processCPU()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(engine.name+"/dropped-parallel", func(b *testing.B) {
			tp := declare[benchEvent](b)
			if _, err := Attach(tp, append(engine.opts, Filter(fourPredicates))...); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ev := benchEvent{Status: 200, DurationUs: 100, Bytes: 10}
				for pb.Next() {
					tp.Fire(&ev)
				}
			})
		})
		b.Run(engine.name+"/recorded", func(b *testing.B) {
			tp := declare[benchEvent](b)
			s := newSession(b, 1<<24)
			if _, err := s.Enable(tp, append(engine.opts, Filter(fourPredicates))...); err != nil {
				b.Fatal(err)
			}
			ev := benchEvent{Status: 503, DurationUs: 100, Bytes: 10}
			benchRecording(b, s, tp, &ev)
			st := tp.Stats()
			b.ReportMetric(float64(st.Dropped)/float64(st.Fired), "dropped/op")
		})
	}
}

func BenchmarkRecordDropped(b *testing.B) {
	tp := declare[peerEvent](b)
	s := newSession(b, 1<<20)
	if _, err := s.Enable(tp, Filter(`a > 100 && s == "keep*"`)); err != nil {
		b.Fatal(err)
	}
	ev := peerEvent{A: 1000}
	copy(ev.S[:], "drop-me")
	cpu := -processCPU()
	for range b.N {
		tp.Fire(&ev)
	}
	cpu += processCPU()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	if st := tp.Stats(); st.Matched != 0 {
		b.Fatalf("%+v", st)
	}
}

// processCPU is the CPU time the process has used, in ns.
func processCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// benchDrain reads every record ready in r and returns how many.
func benchDrain(b *testing.B, r *ChannelReader) uint64 {
	total := 0
	for r.Pending() {
		n, err := r.ReadAll(0, func(*Event) {})
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return uint64(total)
}

// BenchmarkAttachFilters attaches a filter to each of 10,000 tracepoints
// and reports the time and the Go heap each attachment takes (compiling,
// verifying, JIT). Native code is mapped outside the heap, a page per
// program at most: see jit.Program.CodeSize.
func BenchmarkAttachFilters(b *testing.B) {
	const n = 10000
	tps := make([]*Tracepoint[benchEvent], n)
	exprs := make([]string, n)
	for i := range tps {
		tps[i] = declare[benchEvent](b)
		// Each its own filter: the same shape, another constant.
		exprs[i] = fmt.Sprintf("status >= 500 || duration_us > %d || bytes > 1048576 || status == 404", 20000+i)
	}
	for b.Loop() {
		links := make([]*Attachment, 0, n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		for i, tp := range tps {
			a, err := Attach(tp, Filter(exprs[i]))
			if err != nil {
				b.Fatal(err)
			}
			links = append(links, a)
		}
		elapsed := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/attach")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/attach")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "alloc-B/attach")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/attach")
		for _, l := range links {
			l.Close()
		}
		runtime.KeepAlive(links)
	}
}

// BenchmarkContext measures what filling the context block costs: the
// clock read every recorded event pays, and the thread and goroutine ids
// that only attachments asking for them pay.
func BenchmarkContext(b *testing.B) {
	for _, n := range []struct {
		name  string
		needs needs
	}{{"none", 0}, {"timestamp", needTimestamp}, {"vtid", needTid}, {"goid", needGoid}} {
		b.Run(n.name, func(b *testing.B) {
			var c Context
			for b.Loop() {
				fillContext(&c, n.needs)
			}
		})
	}
}

// peerEvent is the payload of the comparison with LTTng (BENCHMARKS.md):
// 3 × int64 and a 16-byte string.
type peerEvent struct {
	A, B, C int64
	S       [16]byte
}

// BenchmarkRecord is Fire → recorded with the payload of the comparison
// with LTTng: with no program (record every event) and with a filter that
// keeps every event; and, as "dropped", Fire of an event that filter
// drops (its last predicate fails: the whole filter runs). The rings are read
// with the timer stopped when a ring is half full (a reader running
// alongside would compete for the CPU); what is timed is recording alone.
func BenchmarkRecord(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{{"all", nil}, {"filter", []Option{Filter(`a > 100 && s == "keep*"`)}}} {
		ev := peerEvent{A: 1000, B: 2, C: 3}
		copy(ev.S[:], "keep-me")
		b.Run(tc.name, func(b *testing.B) {
			tp := declare[peerEvent](b)
			s := newSession(b, 1<<24)
			if _, err := s.Enable(tp, tc.opts...); err != nil {
				b.Fatal(err)
			}
			benchRecording(b, s, tp, &ev)
			if st := tp.Stats(); st.Dropped != 0 || st.Recorded != st.Fired {
				b.Fatalf("%d of %d dropped", st.Dropped, st.Fired)
			}
		})
	}
}

// benchRecording times fire, which records into s: the rings are read
// with the timer stopped, whenever a ring is half full (a reader running
// alongside would compete for the CPU, and one that falls behind turns
// recordings into drops). What is timed is recording alone, as the
// process's CPU time too (on a shared machine, less noisy than the wall
// clock).
func benchRecording[T any](b *testing.B, s *Session, tp *Tracepoint[T], ev *T) {
	r, err := s.Reader()
	if err != nil {
		b.Fatal(err)
	}
	half := uint64(s.ch.ShardSize()/recordBytes(tp.Info())) / 2
	read := uint64(0)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := -processCPU()
	for i := range b.N {
		tp.Fire(ev)
		if i&1023 == 1023 && s.ch.Stats().Records-read >= half {
			b.StopTimer()
			cpu += processCPU()
			read += benchDrain(b, r)
			cpu -= processCPU()
			b.StartTimer()
		}
	}
	b.StopTimer()
	cpu += processCPU()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
