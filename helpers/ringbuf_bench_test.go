package helpers_test

import (
	"testing"
	"time"

	"github.com/uebpf/uebpf/maps"
)

// progRingbufLoop reserves, fills and submits 1000 records of 64 bytes
// (bpf_ringbuf_reserve + bpf_ringbuf_submit with BPF_RB_NO_WAKEUP) and
// returns how many it submitted.
const progRingbufLoop = `
	mov %r6, 0
loop:
	lddw %r1, map_by_fd(0)
	mov %r2, 64
	mov %r3, 0
	call 131
	jeq %r0, 0, out
	stdw [%r0+0], 1
	mov %r1, %r0
	mov %r2, 1
	call 132
	add %r6, 1
	jlt %r6, 1000, loop
out:
	mov %r0, %r6
	exit`

// BenchmarkRingbufReserveSubmit is a program's reserve + submit of one
// record; each run's records are read back (ReadBatch) before the next run,
// and that read is part of the time.
func BenchmarkRingbufReserveSubmit(b *testing.B) {
	m, err := maps.New(&maps.Spec{Name: "rb", Type: maps.RingBuf, MaxEntries: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	rd, err := maps.NewReader(m)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	recs := make([]maps.Record, 256)
	drain := func([]byte) {
		rd.SetDeadline(time.Unix(1, 0))
		for {
			n, err := rd.ReadBatch(recs)
			if err != nil || n < len(recs) {
				return
			}
		}
	}
	p := benchProgram(b, progRingbufLoop, nil, m)
	runBench(b, p, nil, callsPerRun, drain)
}
