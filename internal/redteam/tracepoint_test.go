package redteam

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/vm"
)

// hostileEvent is the payload of the tracepoint the hostile programs
// attach to.
type hostileEvent struct {
	Status uint32
	Name   [12]byte
}

var hostilePoint = tracepoint.New[hostileEvent]("redteam", "hostile")

// TestHostileTracepoint attaches programs that overwrite every byte of
// the record they run on (the payload, the padding and the context block
// the session then records, Procname with no NUL) to a tracepoint whose
// session records what they keep, fires it from 8 goroutines, and reads
// the records back, each case in a child process: what a program wrote
// into its record must not reach the ring's framing (the session's
// header is written after the program ran), every recorded event must
// decode, and no event may be lost or duplicated.
func TestHostileTracepoint(t *testing.T) {
	for _, interpreted := range []bool{true, false} {
		name := "jit"
		if interpreted {
			name = "interpreter"
		}
		t.Run(name, func(t *testing.T) {
			if !inChild() {
				t.Parallel()
			}
			isolated(t, func(*testing.T) (string, error) { return hostileRecords(interpreted) })
		})
	}
}

func hostileRecords(interpreted bool) (string, error) {
	size := hostilePoint.Info().RecordSize()
	// Overwrite the whole record, then keep the event.
	src := ""
	for off := 0; off+8 <= size; off += 8 {
		src += fmt.Sprintf("stdw [%%r1%+d], -1\n", off)
	}
	src += "mov %r0, 1\nexit"
	prog, err := vm.Load(&vm.ProgramSpec{Name: "scribble", Instructions: asm.MustAssemble(src)}, nil)
	if err != nil {
		return "", err
	}
	s, err := tracepoint.NewSession(&tracepoint.SessionOptions{BufferSize: 1 << 20})
	if err != nil {
		return "", err
	}
	defer s.Close()
	opts := []tracepoint.Option{tracepoint.VMProgram(prog), tracepoint.WithTimestamp(), tracepoint.WithThreadID(), tracepoint.WithGoroutineID()}
	if interpreted {
		opts = append(opts, tracepoint.Interpreted())
	}
	a, err := s.Enable(hostilePoint, opts...)
	if err != nil {
		return "", err
	}
	defer a.Close()
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				hostilePoint.Fire(&hostileEvent{Status: uint32(g*each + i)})
			}
		})
	}
	wg.Wait()
	s.SetDeadline(time.Now())
	n := 0
	for {
		r, err := s.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("record %d: %w", n, err)
		}
		ev, err := tracepoint.Decode[hostileEvent](r)
		if err != nil {
			return "", fmt.Errorf("record %d: %w", n, err)
		}
		// The session records what the program left in its record's
		// payload and collected context fields; the process's name and pid
		// come from the session, which a program cannot write.
		if ev.Status != 0xffffffff || r.Context.Vtid != -1 || r.Context.Goid != ^uint64(0) || r.Has != tracepoint.HasVtid|tracepoint.HasGoid {
			return "", fmt.Errorf("record %d: status %#x, context %+v: not the program's bytes", n, ev.Status, r.Context)
		}
		if r.Context.Vpid != int64(os.Getpid()) || r.Context.Procname[15] != 0 {
			return "", fmt.Errorf("record %d: context %+v: the program wrote the process's part", n, r.Context)
		}
		n++
	}
	st := a.Stats()
	if n != goroutines*each || st.Recorded != uint64(n) || st.Dropped != 0 || hostilePoint.Stats().Fired != goroutines*each {
		return "", fmt.Errorf("read %d records; attachment %+v; tracepoint %+v", n, st, hostilePoint.Stats())
	}
	return fmt.Sprintf("%d scribbled records, all decoded", n), nil
}
