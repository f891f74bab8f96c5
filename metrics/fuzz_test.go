package metrics_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/metrics"
)

// Map contents are written by programs: whatever keys and counts a map
// holds, a scrape succeeds, and a histogram's buckets stay cumulative.
func FuzzMapCollect(f *testing.F) {
	f.Add(uint8(4), uint8(4), true, []byte("\x01\x00\x00\x00\x03\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(uint8(3), uint8(1), false, []byte("abc\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Add(uint8(3), uint8(1), false, []byte("a\xffc\x01\x00\x00\x00\x00\x00\x00\x00a\\xff\x02\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, labelSize, bucketSize uint8, hist bool, data []byte) {
		labelSize, bucketSize = labelSize%17+1, []uint8{1, 2, 4, 8}[bucketSize%4]
		keySize := int(labelSize)
		labels := []metrics.Label{{Name: "l", Size: int(labelSize), Decode: metrics.String}}
		kind := metrics.Counter
		if hist {
			kind = metrics.Histogram
			keySize += int(bucketSize)
			labels = append(labels, metrics.Label{Name: "bucket", Size: int(bucketSize)})
		}
		m, err := maps.New(&maps.Spec{Name: "f", Type: maps.Hash, KeySize: uint32(keySize), ValueSize: 8, MaxEntries: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for rec := keySize + 8; len(data) >= rec; data = data[rec:] {
			if err := m.Update(data[:keySize], data[keySize:rec], maps.UpdateAny); err != nil {
				break // full
			}
		}
		c, err := metrics.NewMapCollector(metrics.Map{Name: "f_total", Help: "f", Map: m, Kind: kind, Labels: labels, MaxBucket: 20})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err) // whatever the keys hold, the scrape succeeds
		}
		for _, fam := range fams {
			for _, mt := range fam.GetMetric() {
				var last uint64
				for _, b := range mt.GetHistogram().GetBucket() {
					if b.GetCumulativeCount() < last {
						t.Fatalf("buckets not cumulative: %v", mt.GetHistogram())
					}
					last = b.GetCumulativeCount()
				}
			}
		}
	})
}

// The String decoder gives valid UTF-8 for any bytes, which
// UnescapeString turns back into the string's bytes, so that distinct
// strings never share a label.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "nginx", "ab\xffcd", `a\xffb`, `\\`, "\xc3", "\xed\xa0\x80", "\xef\xbf\xbd", "x\x00y", `\x4`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		label, err := metrics.String(b)
		if err != nil || !utf8.ValidString(label) {
			t.Fatalf("String(%q) = %q, %v", b, label, err)
		}
		want, _, _ := bytes.Cut(b, []byte{0})
		back, err := metrics.UnescapeString(label)
		if err != nil || !bytes.Equal(back, want) {
			t.Fatalf("UnescapeString(String(%q) = %q) = %q, %v", b, label, back, err)
		}
		if utf8.Valid(want) && !bytes.Contains(want, []byte(`\`)) && label != string(want) {
			t.Fatalf("String(%q) = %q: a UTF-8 string without a backslash is kept as it is", b, label)
		}
	})
}
