package ctf

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkWrite measures events written per second: into a file, and into
// io.Discard (the writer's own cost).
func BenchmarkWrite(b *testing.B) {
	for _, tc := range []struct {
		name string
		file bool
	}{{"file", true}, {"discard", false}} {
		b.Run(tc.name, func(b *testing.B) {
			var w *Writer
			if tc.file {
				var err error
				if w, err = Create(filepath.Join(b.TempDir(), "trace")); err != nil {
					b.Fatal(err)
				}
			} else {
				w, _ = newMemWriter(b)
				w.streams[0].f = struct {
					io.Writer
					io.Closer
				}{io.Discard, io.NopCloser(nil)}
			}
			payload := make([]byte, 32)
			r := rec(&layoutTP.Point, 1, payload)
			b.SetBytes(48) // an event and its padding
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r.Context.TimestampNs = uint64(i)
				if err := w.Write(r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
