//go:build linux

package channel

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Shared reports whether channels can be handed to another process here.
const Shared = true

// memory is a channel's two files and the producer's mappings of them.
type memory struct {
	data, pos     []byte
	dataFD, posFD *os.File
}

// newMemory makes the data file (a sealed memfd, or backing resized to
// dataSize when it is not nil) and the positions file, and maps both.
func newMemory(name string, dataSize, posSize uint64, backing *os.File) (*memory, error) {
	m := &memory{}
	var err error
	if backing != nil {
		if err = backing.Truncate(int64(dataSize)); err != nil {
			return nil, fmt.Errorf("sizing %s: %w", backing.Name(), err)
		}
		m.dataFD = backing
	} else if m.dataFD, err = newMemfd(name, dataSize); err != nil {
		return nil, err
	}
	if m.posFD, err = newMemfd(name+"-positions", posSize); err != nil {
		m.dataFD.Close()
		return nil, err
	}
	if m.data, err = mmap(m.dataFD, dataSize, true); err == nil {
		m.pos, err = mmap(m.posFD, posSize, true)
	}
	if err != nil {
		m.unmap()
		m.closeFiles()
		return nil, err
	}
	return m, nil
}

// newMemfd makes a memfd of size bytes, sealed against shrinking and
// growing: a consumer that maps it can rely on its size.
func newMemfd(name string, size uint64) (*os.File, error) {
	fd, err := unix.MemfdCreate("uebpf-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "memfd:uebpf-"+name)
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("sizing a memfd of %d bytes: %w", size, err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing a memfd: %w", err)
	}
	return f, nil
}

func mmap(f *os.File, size uint64, writable bool) ([]byte, error) {
	if size == 0 || size > 1<<40 {
		return nil, fmt.Errorf("mapping %d bytes of %s: %w", size, f.Name(), ErrCorrupt)
	}
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), prot, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes of %s: %w", size, f.Name(), err)
	}
	return b, nil
}

// files returns new descriptors of the channel's files for a consumer:
// the data file opened again read-only (a consumer cannot map it
// writable), the positions file as it is.
func (m *memory) files() (data, pos *os.File, err error) {
	if m.dataFD == nil {
		return nil, nil, os.ErrClosed
	}
	data, err = os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(m.dataFD.Fd())), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("reopening the data file read-only: %w", err)
	}
	fd, err := unix.FcntlInt(m.posFD.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		data.Close()
		return nil, nil, fmt.Errorf("dup of the positions file: %w", err)
	}
	return data, os.NewFile(uintptr(fd), m.posFD.Name()), nil
}

func (m *memory) closeFiles() {
	if m.dataFD != nil {
		m.dataFD.Close()
		m.posFD.Close()
		m.dataFD, m.posFD = nil, nil
	}
}

func (m *memory) unmap() {
	if m.data != nil {
		unix.Munmap(m.data)
		m.data = nil
	}
	if m.pos != nil {
		unix.Munmap(m.pos)
		m.pos = nil
	}
}

// mapFiles maps a channel a producer handed over: data read-only,
// positions (if not nil) writable. Their sizes come from the files
// themselves; a memfd must be sealed against shrinking, and any other file
// is read with faults turned into errors (see guard).
func mapFiles(data, pos *os.File) (d, p []byte, err error) {
	dsize, err := fileSize(data)
	if err != nil {
		return nil, nil, err
	}
	files := []*os.File{data}
	var psize uint64
	if pos != nil {
		if psize, err = fileSize(pos); err != nil {
			return nil, nil, err
		}
		files = append(files, pos)
	}
	for _, f := range files {
		seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
		if err == nil && seals&unix.F_SEAL_SHRINK == 0 {
			return nil, nil, fmt.Errorf("%s is a memfd not sealed against shrinking: %w", f.Name(), ErrCorrupt)
		}
		if err != nil && !errors.Is(err, unix.EINVAL) {
			return nil, nil, fmt.Errorf("%s: seals: %w", f.Name(), err)
		}
	}
	if d, err = mmap(data, dsize, false); err != nil {
		return nil, nil, err
	}
	if pos == nil {
		return d, nil, nil
	}
	if p, err = mmap(pos, psize, true); err != nil {
		unix.Munmap(d)
		return nil, nil, err
	}
	return d, p, nil
}

func unmapFiles(d, p []byte) {
	unix.Munmap(d)
	if p != nil {
		unix.Munmap(p)
	}
}

func fileSize(f *os.File) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, fmt.Errorf("%s is not a regular file or memfd: %w", f.Name(), ErrCorrupt)
	}
	return uint64(st.Size), nil
}
