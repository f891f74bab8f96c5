//go:build linux

package redteam

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/tracepoint"
)

var channelPoint = tracepoint.New[hostileEvent]("redteam", "channel")

// TestHostileChannel: a consumer (often root) reads the channel of an
// application that writes what it likes into the channel's memory, and
// an application's producer faces a consumer that writes what it likes
// into its positions, each case in a child process. A reader must end,
// never crash, count what did not hold and decode nothing that did not;
// a producer must go on recording, its counts exact.
func TestHostileChannel(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func() (string, error)
	}{
		{"garbage data", hostileData},
		{"truncated file", truncatedFile},
		{"garbage positions", hostilePositions},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !inChild() {
				t.Parallel()
			}
			isolated(t, func(*testing.T) (string, error) { return c.run() })
		})
	}
}

// newChannelSession records a session of channelPoint with n events
// fired, optionally backed by file.
func newChannelSession(n int, file *os.File) (*tracepoint.Session, error) {
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 20, File: file})
	if err != nil {
		return nil, err
	}
	if _, err := s.Enable(channelPoint, tracepoint.WithThreadID()); err != nil {
		s.Close()
		return nil, err
	}
	for i := range n {
		channelPoint.Fire(&hostileEvent{Status: uint32(i)})
	}
	return s, nil
}

// writable maps the session's data file writable, as a hostile producer
// has it: the descriptor handed out is read-only, but its owner may open
// it again.
func writable(s *tracepoint.Session) ([]byte, *os.File, *os.File, error) {
	d, p, err := s.Files()
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(d.Fd())), os.O_RDWR, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return b, d, p, err
}

// hostileData overwrites random bytes of the channel (header, layouts,
// rings) between reads, many times over.
func hostileData() (string, error) {
	s, err := newChannelSession(5000, nil)
	if err != nil {
		return "", err
	}
	defer s.Close()
	mem, d, p, err := writable(s)
	if err != nil {
		return "", err
	}
	defer unix.Munmap(mem)
	rng := rand.New(rand.NewPCG(1, 2))
	dataOff := int(binary.LittleEndian.Uint64(mem[48:])) // before it is scribbled over
	le := binary.LittleEndian
	var decoded, refused, bad uint64
	for round := range 300 {
		r, err := tracepoint.MapChannel(d, p)
		if err != nil {
			refused++
		} else {
			for range 8 {
				if _, err := r.ReadAll(0, func(ev *tracepoint.Event) {
					if len(ev.Payload) != ev.Info.Size {
						panic(fmt.Sprintf("a %d-byte payload of a %d-byte layout", len(ev.Payload), ev.Info.Size))
					}
					decoded++
				}); err != nil {
					break
				}
			}
			st := r.Stats()
			bad += st.Bad + st.Skipped
			r.Close()
		}
		// Fire, then scribble a few words over what was just recorded,
		// not read yet, in some ring; in the last rounds over the header
		// and the layouts too.
		for i := range 10 {
			channelPoint.Fire(&hostileEvent{Status: uint32(i)})
		}
		for range 4 {
			line := 128 + 64*rng.IntN(int(le.Uint32(mem[16:]))) // a shard's line
			base, size, head := le.Uint64(mem[line:]), le.Uint64(mem[line+8:]), le.Uint64(mem[line+16:])
			at := int(base + (head-uint64(rng.IntN(400)))%size)
			if round > 270 {
				at = rng.IntN(8192)
			}
			if at < 0 || at+8 > len(mem) || base < uint64(dataOff) {
				continue
			}
			for k := range 8 {
				mem[at+k] = byte(rng.Uint32())
			}
		}
	}
	return fmt.Sprintf("%d events decoded, %d channels refused, %d bad records and skipped bytes", decoded, refused, bad), nil
}

// truncatedFile shrinks a file-backed channel's file under its reader's
// mapping: reads fault, which must be an error, not a crash.
func truncatedFile() (string, error) {
	dir, err := os.MkdirTemp("", "redteam-channel")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ring")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	s, err := newChannelSession(20000, f)
	if err != nil {
		return "", err
	}
	defer s.Close()
	d, p, err := s.Files()
	if err != nil {
		return "", err
	}
	r, err := tracepoint.MapChannel(d, p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if err := os.Truncate(path, 4096); err != nil {
		return "", err
	}
	n, err := r.ReadAll(0, func(*tracepoint.Event) {})
	if err == nil {
		return "", fmt.Errorf("read %d events of a truncated channel without an error", n)
	}
	return fmt.Sprintf("read of a truncated channel: %v", err), nil
}

// hostilePositions writes random consumer positions while 8 goroutines
// record: the producer never writes outside its rings or loses count.
func hostilePositions() (string, error) {
	s, err := newChannelSession(0, nil)
	if err != nil {
		return "", err
	}
	defer s.Close()
	_, p, err := s.Files()
	if err != nil {
		return "", err
	}
	fi, err := p.Stat()
	if err != nil {
		return "", err
	}
	pos, err := unix.Mmap(int(p.Fd()), 0, int(fi.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return "", err
	}
	defer unix.Munmap(pos)
	stop := make(chan struct{})
	var scribbler sync.WaitGroup
	scribbler.Go(func() {
		rng := rand.New(rand.NewPCG(3, 4))
		for {
			select {
			case <-stop:
				return
			default:
			}
			at := rng.IntN(len(pos)/8) * 8
			v := rng.Uint64()
			for k := range 8 {
				pos[at+k] = byte(v >> (8 * k))
			}
		}
	})
	const goroutines, each = 8, 50000
	before := channelPoint.Stats()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				channelPoint.Fire(&hostileEvent{Status: uint32(g*each + i)})
			}
		})
	}
	wg.Wait()
	close(stop)
	scribbler.Wait()
	st := channelPoint.Stats()
	fired, rec, drop := st.Fired-before.Fired, st.Recorded-before.Recorded, st.Dropped-before.Dropped
	if fired != goroutines*each || rec+drop != fired {
		return "", fmt.Errorf("fired %d, recorded %d + dropped %d", fired, rec, drop)
	}
	return fmt.Sprintf("%d fired under garbage positions: %d recorded, %d dropped", fired, rec, drop), nil
}
