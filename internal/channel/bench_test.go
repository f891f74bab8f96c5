package channel

import (
	"testing"
	"unsafe"
)

// BenchmarkWrite is a record of a 40-byte body (the tracepoint's 3 ×
// int64 and a 16-byte string): claim, copy, commit.
func BenchmarkWrite(b *testing.B) {
	c := newChannel(b, Options{ShardSize: 1 << 20, Mode: Overwrite})
	payload := make([]byte, 40)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			cl, dst := c.Begin(len(payload))
			if dst == nil {
				c.Release(cl)
				continue
			}
			copy(unsafe.Slice((*byte)(dst), len(payload)), payload)
			c.Commit(cl, 1)
		}
	})
}

// BenchmarkRead reads 40-byte records that a writer keeps in the ring.
func BenchmarkRead(b *testing.B) {
	c := newChannel(b, Options{Shards: 1, ShardSize: 1 << 20})
	oneP(b)
	r := c.Reader()
	payload := make([]byte, 40)
	var sum uint32
	b.ResetTimer()
	for i := 0; i < b.N; {
		for range 4096 {
			cl, dst := c.Begin(len(payload))
			if dst == nil {
				c.Release(cl)
				break
			}
			copy(unsafe.Slice((*byte)(dst), len(payload)), payload)
			c.Commit(cl, 1)
		}
		n, _ := r.Read(0, 0, func(tag uint32, body []byte) { sum += tag + uint32(len(body)) })
		i += n
	}
	_ = sum
}
