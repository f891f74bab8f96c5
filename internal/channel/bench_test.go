package channel

import (
	"testing"
	"unsafe"
)

// BenchmarkWrite is a record of a 40-byte body (the tracepoint's 3 ×
// int64 and a 16-byte string): claim, copy, commit.
func BenchmarkWrite(b *testing.B) {
	c := newChannel(b, Options{ShardSize: 1 << 20, Mode: Overwrite})
	payload := make([]uint64, 5)
	b.RunParallel(func(pb *testing.PB) {
		r := Record{Tag: 1, Words: [3]uint64{1}, NWords: 1, Body: unsafe.Pointer(&payload[0]), Size: 40}
		for pb.Next() {
			c.Write(&r)
		}
	})
}

// BenchmarkRead reads 40-byte records that a writer keeps in the ring.
func BenchmarkRead(b *testing.B) {
	c := newChannel(b, Options{Shards: 1, ShardSize: 1 << 20})
	oneP(b)
	r := c.Reader()
	payload := make([]uint64, 5)
	rec := Record{Tag: 1, Body: unsafe.Pointer(&payload[0]), Size: 40}
	var sum uint32
	b.ResetTimer()
	for i := 0; i < b.N; {
		for range 4096 {
			if !c.Write(&rec) {
				break
			}
		}
		n, _ := r.Read(0, 0, func(tag uint32, body []byte) { sum += tag + uint32(len(body)) })
		i += n
	}
	_ = sum
}
