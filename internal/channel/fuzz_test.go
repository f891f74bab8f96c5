package channel

import (
	"encoding/binary"
	"testing"
)

// FuzzReader reads a channel whose data file and consumer positions are
// hostile: a valid channel's bytes with the fuzzer's bytes written over
// them at the fuzzer's offset. Reading must neither panic nor fail to
// end, and every record it hands out lies inside the file.
func FuzzReader(f *testing.F) {
	base := func(mode Mode) []byte {
		c, err := New(Options{Shards: 2, ShardSize: 4096, MetaSize: 4096, Mode: mode})
		if err != nil {
			f.Fatal(err)
		}
		defer c.Close()
		c.AppendMeta([]byte("meta"))
		for i := range 150 {
			write(c, 1, uint32(i), 8+(i%9)*8)
		}
		return append([]byte(nil), c.mem.data...)
	}
	files := [][]byte{base(Discard), base(Overwrite)}
	f.Add(uint8(0), uint32(0), []byte{}, uint64(0), uint64(0))
	f.Add(uint8(1), uint32(headerFixed+lineHead), []byte{0xff, 0xff, 0xff, 0xff}, uint64(0), uint64(8))
	f.Add(uint8(0), uint32(offShards), []byte{0, 4}, uint64(3), uint64(1<<40))
	f.Add(uint8(0), uint32(headerFixed+lineSize), []byte{0, 0x10}, uint64(8), uint64(0))
	f.Add(uint8(0), uint32(2*4096+64<<10), []byte{0x10, 0, 0, 0x80}, uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, which uint8, at uint32, patch []byte, pos0, pos1 uint64) {
		data := append([]byte(nil), files[int(which)%len(files)]...)
		if int(at) < len(data) {
			copy(data[at:], patch)
		} else {
			data = append(data, patch...) // a longer file than the header says
		}
		pos := make([]byte, 2*pageSize)
		binary.LittleEndian.PutUint64(pos, pos0)
		binary.LittleEndian.PutUint64(pos[shardLine:], pos1)
		for _, p := range [][]byte{nil, pos} {
			r, err := parse(data, p)
			if err != nil {
				continue
			}
			r.Meta(0)
			r.Stats()
			for range 64 { // reading ends: a bounded number of rounds
				n := 0
				for i := 0; i < r.Shards(); i++ {
					k, err := r.Read(i, 0, func(tag uint32, body []byte) {
						if len(body) > len(data) {
							t.Fatalf("a body of %d bytes from a %d-byte file", len(body), len(data))
						}
					})
					if err != nil {
						t.Fatal(err)
					}
					n += k
				}
				if n == 0 {
					break
				}
			}
		}
	})
}
