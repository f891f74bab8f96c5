//go:build !linux

package maps

import "errors"

// ringHeapMax bounds the data area of a ring buffer where rings cannot be
// mapped: beyond it, the eager heap allocation is refused.
const ringHeapMax = 256 << 20

var errNoMmap = errors.New("no mmap")

func mmapRing(n uintptr) ([]byte, error) { return nil, errNoMmap }

func munmapRing(b []byte) error { return nil }
