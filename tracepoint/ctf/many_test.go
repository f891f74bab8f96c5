package ctf

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
)

func TestManyPackets(t *testing.T) {
	const n = 50_000
	dir := filepath.Join(t.TempDir(), "trace")
	w, err := Create(dir, PacketSize(MinPacketSize))
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 32)
	r := rec(&layoutTP.Point, 1, payload)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		r.Context.TimestampNs = uint64(1000 + i)
		payload[0] = byte(i)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			// Events before a discard, and a trimmed packet in the middle
			// of the stream.
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			w.SetDiscarded(0, 7)
		}
	}
	runtime.ReadMemStats(&after)
	// The writer holds one packet and allocates nothing per event, nor per
	// packet: what the test allocated meanwhile is far less than the
	// stream it wrote.
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Errorf("%d bytes allocated writing %d events", d, n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StreamFile))
	if err != nil {
		t.Fatal(err)
	}
	packets, events, err := readStream(b, []int{45})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != n {
		t.Errorf("read back %d events, wrote %d", len(events), n)
	}
	t.Logf("%d events in %d packets, %d bytes", len(events), len(packets), len(b))
	seen := 0 // events before the packet
	for i, h := range packets {
		want := uint64(0)
		if seen > n/2 {
			want = 7
		}
		if h.Discarded != want {
			t.Fatalf("packet %d, after %d events, says %d events discarded, want %d", i, seen, h.Discarded, want)
		}
		seen += (int(h.ContentSize/8) - packetHeaderSize + 3) / 48
	}
	if seen != n {
		t.Errorf("packets' content sizes add up to %d events, want %d", seen, n)
	}

	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Skip("babeltrace2 is not installed (Debian package babeltrace2)")
	}
	out, err := exec.Command(bt, dir, "-c", "sink.utils.counter").CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2: %v\n%s", err, out)
	}
	// The counter prints as it goes: its last count is the total.
	count := func(what string) int {
		all := regexp.MustCompile(`(?m)^\s*(\d+) `+what).FindAllSubmatch(out, -1)
		if all == nil {
			t.Fatalf("babeltrace2 counted no %s:\n%s", what, out)
		}
		c, _ := strconv.Atoi(string(all[len(all)-1][1]))
		return c
	}
	if got := count("Event messages"); got != n {
		t.Errorf("babeltrace2 read %d events, wrote %d", got, n)
	}
	if got := count("Packet end messages"); got != len(packets) {
		t.Errorf("babeltrace2 read %d packets, wrote %d", got, len(packets))
	}
	if got := count("Discarded event message"); got != 1 {
		t.Errorf("babeltrace2 read %d discarded-events messages, want 1", got)
	}
}
