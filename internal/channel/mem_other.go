//go:build !linux

package channel

import (
	"errors"
	"os"
	"unsafe"
)

// Shared reports whether channels can be handed to another process here.
const Shared = false

var errUnsupported = errors.New("channels are shared between processes on Linux only")

// memory is a channel's memory: the Go heap, for this process only.
type memory struct {
	data, pos []byte
}

func newMemory(name string, dataSize, posSize uint64, backing *os.File) (*memory, error) {
	if backing != nil {
		return nil, errUnsupported
	}
	return &memory{data: words(dataSize), pos: words(posSize)}, nil
}

// words returns n bytes, 8-byte aligned.
func words(n uint64) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), n)
}

func (m *memory) files() (data, pos *os.File, err error) { return nil, nil, errUnsupported }
func (m *memory) closeFiles()                            {}
func (m *memory) unmap()                                 {}

func mapFiles(data, pos *os.File) (d, p []byte, err error) { return nil, nil, errUnsupported }
func unmapFiles(d, p []byte)                               {}
