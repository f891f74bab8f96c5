//go:build linux && (amd64 || arm64)

package execmem

import (
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	pageSize   = 4096
	minShift   = 8  // the smallest slot is 256 bytes
	maxShift   = 16 // the largest is 64 KiB; larger code gets its own mapping
	chunkBytes = 4 << 20
)

// A chunk is a read-execute mapping of a range of the file.
type chunk struct {
	base unsafe.Pointer
	size uintptr
	off  int64 // in the file
}

var arena struct {
	mu     sync.Mutex
	state  int8 // 0: not set up yet, 1: memory file, -1: private pages
	fd     int
	end    int64                                     // the file's size
	chunks []chunk                                   // every mapping of the file, the current one last
	used   uintptr                                   // bytes of the current chunk handed out
	free   [maxShift - minShift + 1][]unsafe.Pointer // free slots by size class
}

// Map copies code into executable memory and returns it: the code, with
// its slot as the capacity, which holds instructions that trap after the
// code.
func Map(code []byte) ([]byte, error) {
	if len(code) == 0 {
		return nil, fmt.Errorf("execmem: no code")
	}
	a := &arena
	a.mu.Lock()
	if a.state == 0 {
		a.state = -1
		if sharedCode {
			a.state = setUp()
		}
	}
	if a.state < 0 {
		a.mu.Unlock()
		return mapPrivate(code)
	}
	slot, off, err := allocate(uintptr(len(code)))
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// A slot holds traps (fresh chunks are filled, freed slots
	// overwritten), so only the code is written; a mapping of its own
	// gets its tail filled.
	err = write(off, code)
	if err == nil && len(slot) > 1<<maxShift {
		err = fill(off+int64(len(code)), len(slot)-len(code))
	}
	if err != nil {
		Unmap(slot) // all of it: the write may have stopped anywhere
		return nil, err
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(slot)))
	syncICache(start, start+uintptr(len(slot)))
	return slot[:len(code)], nil
}

// Unmap takes back memory Map returned: it holds traps, not the code,
// when Unmap returns. Nothing may run its code any more. Only the code
// (mem's length) is overwritten: the rest of the slot (up to mem's
// capacity) holds traps already, and a compile's own Close would
// otherwise write the whole power-of-two slot.
func Unmap(mem []byte) {
	p, size := unsafe.Pointer(unsafe.SliceData(mem)), uintptr(cap(mem))
	a := &arena
	a.mu.Lock()
	i := findChunk(p)
	if i < 0 {
		a.mu.Unlock()
		unix.MunmapPtr(p, size) // private pages
		return
	}
	if size > 1<<maxShift { // a mapping of its own: give it back
		c := a.chunks[i]
		a.chunks = append(a.chunks[:i], a.chunks[i+1:]...)
		a.mu.Unlock()
		unix.MunmapPtr(c.base, c.size)
		unix.Fallocate(a.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, c.off, int64(c.size))
		return
	}
	off := a.chunks[i].off + int64(uintptr(p)-uintptr(a.chunks[i].base))
	a.mu.Unlock()
	// A freed slot holds traps until it is reused, not the old code.
	if fill(off, len(mem)) != nil {
		return // lost rather than reused with its code in place
	}
	class := bits.Len(uint(size-1)) - minShift
	a.mu.Lock()
	a.free[class] = append(a.free[class], p)
	a.mu.Unlock()
}

// setUp creates the memory file, or says to use private pages when
// executable mappings of it are refused.
func setUp() int8 {
	fd, err := unix.MemfdCreate("uebpf-jit", unix.MFD_CLOEXEC|unix.MFD_EXEC)
	if err == unix.EINVAL { // before Linux 6.3, which added MFD_EXEC
		fd, err = unix.MemfdCreate("uebpf-jit", unix.MFD_CLOEXEC)
	}
	if err != nil {
		return -1
	}
	arena.fd = fd
	if _, err := newSlotChunk(); err != nil {
		unix.Close(fd)
		return -1
	}
	return 1
}

// allocate returns a slot for n bytes of code and its offset in the file.
// The caller holds the lock.
func allocate(n uintptr) ([]byte, int64, error) {
	a := &arena
	if n > 1<<maxShift {
		c, err := newChunk((n + pageSize - 1) &^ (pageSize - 1))
		if err != nil {
			return nil, 0, err
		}
		// A mapping of its own goes before the current chunk, which
		// stays last.
		last := len(a.chunks) - 1
		if last > 0 {
			a.chunks[last-1], a.chunks[last] = a.chunks[last], a.chunks[last-1]
		}
		return unsafe.Slice((*byte)(c.base), c.size), c.off, nil
	}
	shift := max(bits.Len(uint(n-1)), minShift)
	size := uintptr(1) << shift
	var p unsafe.Pointer
	if l := a.free[shift-minShift]; len(l) != 0 {
		p = l[len(l)-1]
		a.free[shift-minShift] = l[:len(l)-1]
	} else {
		// Slots are aligned to their size: the current chunk's rest
		// up to that alignment is lost.
		start := (a.used + size - 1) &^ (size - 1)
		if len(a.chunks) == 0 || start+size > a.chunks[len(a.chunks)-1].size {
			if _, err := newSlotChunk(); err != nil {
				return nil, 0, err
			}
			start, a.used = 0, 0
		}
		c := a.chunks[len(a.chunks)-1]
		p = unsafe.Add(c.base, start)
		a.used = start + size
	}
	c := a.chunks[findChunk(p)]
	return unsafe.Slice((*byte)(p), size), c.off + int64(uintptr(p)-uintptr(c.base)), nil
}

// newChunk grows the file by size bytes and maps them read-execute as
// the new last chunk (for a large allocation, allocate moves it). The
// caller holds the lock.
func newChunk(size uintptr) (chunk, error) {
	a := &arena
	if err := unix.Ftruncate(a.fd, a.end+int64(size)); err != nil {
		return chunk{}, fmt.Errorf("execmem: grow the code file to %d bytes: %w", a.end+int64(size), err)
	}
	at := hint(size)
	p, err := unix.MmapPtr(a.fd, a.end, at, size, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_SHARED)
	if err != nil {
		unix.Ftruncate(a.fd, a.end)
		return chunk{}, fmt.Errorf("execmem: map %d bytes of code: %w", size, err)
	}
	placed(p, size, at)
	c := chunk{base: p, size: size, off: a.end}
	a.end += int64(size)
	a.chunks = append(a.chunks, c)
	return c, nil
}

// newSlotChunk maps a new chunk for slots, filled with traps. The caller
// holds the lock.
func newSlotChunk() (chunk, error) {
	c, err := newChunk(chunkBytes)
	if err == nil {
		err = fill(c.off, int(c.size))
	}
	return c, err
}

// findChunk returns the index of the chunk holding p, -1 if none does.
func findChunk(p unsafe.Pointer) int {
	for i, c := range arena.chunks {
		if uintptr(p)-uintptr(c.base) < c.size {
			return i
		}
	}
	return -1
}

// write writes b at off in the file.
func write(off int64, b []byte) error {
	for len(b) != 0 {
		n, err := unix.Pwrite(arena.fd, b, off)
		if err != nil {
			return fmt.Errorf("execmem: write %d bytes of code: %w", len(b), err)
		}
		off, b = off+int64(n), b[n:]
	}
	return nil
}

// fill writes size bytes of traps at off in the file.
func fill(off int64, size int) error {
	for size > 0 {
		n := min(size, len(fillBuf))
		if err := write(off, fillBuf[:n]); err != nil {
			return err
		}
		off, size = off+int64(n), size-n
	}
	return nil
}

// mapPrivate maps code on pages of its own: read-write, filled, then
// read-execute.
func mapPrivate(code []byte) ([]byte, error) {
	size := (uintptr(len(code)) + pageSize - 1) &^ (pageSize - 1)
	arena.mu.Lock()
	at := hint(size)
	p, err := unix.MmapPtr(-1, 0, at, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err == nil {
		placed(p, size, at)
	}
	arena.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("execmem: map %d bytes: %w", size, err)
	}
	mem := unsafe.Slice((*byte)(p), size)
	for n := copy(mem, code); n < len(mem); {
		n += copy(mem[n:], fillBuf[:])
	}
	if err := unix.Mprotect(mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		unix.MunmapPtr(p, size)
		return nil, fmt.Errorf("execmem: mprotect: %w", err)
	}
	syncICache(uintptr(p), uintptr(p)+size)
	return mem[:len(code)], nil
}

// fillBuf holds the trapping instruction bytes unused code memory gets.
var fillBuf = func() (b [1 << maxShift]byte) {
	for i := range b {
		b[i] = fillByte
	}
	return b
}()
