package metrics

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/uebpf/uebpf/maps"
)

// Kind is the kind of metric a map becomes.
type Kind int

const (
	// Counter: each key is a time series whose value only grows.
	Counter Kind = iota
	// Gauge: each key is a time series whose value goes up and down.
	Gauge
	// Histogram: the key's last part is a bucket index (see Buckets),
	// the value its count; the other parts are labels.
	Histogram
)

// Buckets says what a histogram's bucket index means.
type Buckets int

const (
	// Exp2: bucket i counts values up to 2^i, as a log2 histogram in a
	// BPF program keeps them (bucket = 64 - clz(value)).
	Exp2 Buckets = iota
	// Linear: bucket i counts values up to i.
	Linear
)

// Map declares how one map is exported.
type Map struct {
	// Name and Help are the metric's.
	Name, Help string
	// Map is the map read at each scrape: a userspace map, or a kernel
	// map opened through package kbridge.
	Map  maps.Map
	Kind Kind
	// Labels split the key, in order; their sizes add up to the key
	// size. For a histogram the last label is the bucket index (an
	// unsigned integer, its name is ignored).
	Labels []Label
	// Buckets and Multiplier give a histogram's bucket bounds: a bound
	// times Multiplier (0 means 1), e.g. 1e-9 for nanoseconds shown as
	// seconds. MaxBucket is the largest bucket index kept (larger ones
	// fall in +Inf); 0 means 63.
	Buckets    Buckets
	Multiplier float64
	MaxBucket  int
}

// Label is a part of a map's key that becomes a label.
type Label struct {
	Name string
	// Size is the part's size in bytes.
	Size int
	// Decode turns the part's bytes into the label's value; nil is
	// Uint.
	Decode Decoder
}

// A Decoder turns a key part into a label value. A value that is not
// valid UTF-8, which Prometheus refuses, is escaped as String escapes
// it.
type Decoder func(b []byte) (string, error)

// Uint decodes a little-endian unsigned integer of 1, 2, 4 or 8 bytes.
func Uint(b []byte) (string, error) {
	v, err := uintOf(b)
	return strconv.FormatUint(v, 10), err
}

// String decodes a NUL-terminated string (a comm, a path). Any process
// can name itself with bytes that are not UTF-8, which Prometheus
// refuses in a label, so the value is escaped, reversibly: a backslash
// becomes \\ and each byte that is not part of valid UTF-8 \xNN (two
// lower-case hex digits); all else is kept. Distinct strings give
// distinct labels, and UnescapeString gives the bytes back.
func String(b []byte) (string, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return escape(b), nil
}

// escape writes b as valid UTF-8, as String documents.
func escape(b []byte) string {
	if utf8.Valid(b) && bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, '\\', 'x', hex[b[0]>>4], hex[b[0]&15])
		case r == '\\':
			out = append(out, '\\', '\\')
		default:
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// UnescapeString returns the bytes of a label String made.
func UnescapeString(label string) ([]byte, error) {
	out := make([]byte, 0, len(label))
	for i := 0; i < len(label); i++ {
		c := label[i]
		switch {
		case c != '\\':
			out = append(out, c)
		case i+1 < len(label) && label[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(label) && label[i+1] == 'x':
			v, err := strconv.ParseUint(label[i+2:i+4], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("label %q: bad escape at byte %d", label, i)
			}
			out = append(out, byte(v))
			i += 3
		default:
			return nil, fmt.Errorf("label %q: bad escape at byte %d", label, i)
		}
	}
	return out, nil
}

// Names decodes an unsigned integer through a table (syscall numbers,
// error numbers); values missing from it stay numbers.
func Names(names map[uint64]string) Decoder {
	return func(b []byte) (string, error) {
		v, err := uintOf(b)
		if err != nil {
			return "", err
		}
		if n, ok := names[v]; ok {
			return n, nil
		}
		return strconv.FormatUint(v, 10), nil
	}
}

func uintOf(b []byte) (uint64, error) {
	switch len(b) {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case 8:
		return binary.LittleEndian.Uint64(b), nil
	}
	return 0, fmt.Errorf("an integer of %d bytes", len(b))
}

// MapCollector reads maps into metrics at each scrape.
type MapCollector struct {
	maps  []Map
	descs []*prometheus.Desc
}

// NewMapCollector checks the declarations against their maps and returns
// their collector.
func NewMapCollector(ms ...Map) (*MapCollector, error) {
	c := &MapCollector{}
	seen := map[string]bool{}
	for _, m := range ms {
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", m.Name, err)
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("metrics: %q declared twice", m.Name)
		}
		seen[m.Name] = true
		var names []string
		for _, l := range m.labels() {
			names = append(names, l.Name)
		}
		c.maps = append(c.maps, m)
		c.descs = append(c.descs, prometheus.NewDesc(m.Name, m.Help, names, nil))
	}
	return c, nil
}

func (m *Map) check() error {
	switch {
	case m.Name == "":
		return errors.New("no metric name")
	case m.Map == nil:
		return errors.New("no map")
	case m.Kind < Counter || m.Kind > Histogram:
		return fmt.Errorf("unknown kind %d", m.Kind)
	case m.Kind == Histogram && len(m.Labels) == 0:
		return errors.New("a histogram needs its bucket as the last label")
	case m.Buckets != Exp2 && m.Buckets != Linear:
		return fmt.Errorf("unknown bucket kind %d", m.Buckets)
	case m.MaxBucket < 0 || m.MaxBucket > 1<<20:
		return fmt.Errorf("MaxBucket %d out of range", m.MaxBucket)
	}
	size := 0
	for _, l := range m.Labels {
		if l.Size <= 0 {
			return fmt.Errorf("label %q: size %d", l.Name, l.Size)
		}
		size += l.Size
	}
	if ks := int(m.Map.KeySize()); size != ks {
		return fmt.Errorf("map %q: labels cover %d bytes of its %d-byte key", m.Map.Name(), size, ks)
	}
	if m.Kind == Histogram {
		if _, err := uintOf(make([]byte, m.Labels[len(m.Labels)-1].Size)); err != nil {
			return fmt.Errorf("bucket label: %w", err)
		}
	}
	for _, l := range m.labels() {
		if _, err := uintOf(make([]byte, l.Size)); l.Decode == nil && err != nil {
			return fmt.Errorf("label %q: %w", l.Name, err) // Uint would refuse every key
		}
	}
	if vs := m.Map.ValueSize(); vs != 8 {
		return fmt.Errorf("map %q: values of %d bytes, want a u64 count", m.Map.Name(), vs)
	}
	return nil
}

// labels are the Prometheus labels: a histogram's bucket is not one.
func (m *Map) labels() []Label {
	if m.Kind == Histogram {
		return m.Labels[:len(m.Labels)-1]
	}
	return m.Labels
}

func (c *MapCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads every map. A map that cannot be read, or a key a decoder
// refuses, becomes an invalid metric that tells Prometheus why (Handler
// serves the other metrics all the same).
func (c *MapCollector) Collect(ch chan<- prometheus.Metric) {
	for i := range c.maps {
		if err := c.collect(&c.maps[i], c.descs[i], ch); err != nil {
			ch <- prometheus.NewInvalidMetric(c.descs[i], err)
		}
	}
}

// series is one label set's value, or its histogram's bucket counts.
type series struct {
	labels  []string
	value   uint64
	buckets map[uint64]uint64
}

// collect reads m into metrics. Keys whose labels decode alike (strings
// that differ after their NUL) add up into one series: Prometheus refuses
// two series with the same labels.
func (c *MapCollector) collect(m *Map, desc *prometheus.Desc, ch chan<- prometheus.Metric) error {
	all := map[string]*series{}
	var order []string // first-seen order of all's keys
	bucketSize := 0
	if m.Kind == Histogram {
		bucketSize = m.Labels[len(m.Labels)-1].Size
	}
	it := m.Map.Iterate()
	var key, value []byte
	for it.Next(&key, &value) {
		values, err := decodeKey(m.labels(), key)
		if err != nil {
			return fmt.Errorf("map %q key %x: %w", m.Map.Name(), key, err)
		}
		id := strings.Join(values, "\xff") // a byte valid UTF-8 has not
		s := all[id]
		if s == nil {
			s = &series{labels: values}
			if m.Kind == Histogram {
				s.buckets = map[uint64]uint64{}
			}
			all[id] = s
			order = append(order, id)
		}
		n := sumCPUs(value)
		if m.Kind == Histogram {
			b, _ := uintOf(key[len(key)-bucketSize:])
			s.buckets[b] += n
		} else {
			s.value += n
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("map %q: %w", m.Map.Name(), err)
	}
	for _, id := range order {
		s := all[id]
		var mt prometheus.Metric
		var err error
		switch m.Kind {
		case Counter:
			mt, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, float64(s.value), s.labels...)
		case Gauge:
			mt, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, float64(s.value), s.labels...)
		case Histogram:
			count, sum, cum := m.histogram(s.buckets)
			mt, err = prometheus.NewConstHistogram(desc, count, sum, cum, s.labels...)
		}
		if err != nil {
			return fmt.Errorf("map %q: %w", m.Map.Name(), err)
		}
		ch <- mt
	}
	return nil
}

// histogram turns bucket counts into Prometheus' cumulative buckets. The
// map keeps counts only, so the sum is estimated from each bucket's
// midpoint.
func (m *Map) histogram(counts map[uint64]uint64) (count uint64, sum float64, cum map[float64]uint64) {
	mult := m.Multiplier
	if mult == 0 {
		mult = 1
	}
	maxBucket := uint64(m.MaxBucket)
	if maxBucket == 0 {
		maxBucket = 63
	}
	cum = make(map[float64]uint64, maxBucket+1)
	for i := uint64(0); i <= maxBucket; i++ {
		n := counts[i]
		count += n
		cum[m.bound(i)*mult] = count
		sum += float64(n) * (m.bound(i) + m.lowerBound(i)) / 2 * mult
	}
	for i, n := range counts {
		if i > maxBucket { // in +Inf only
			count += n
			sum += float64(n) * m.bound(i) * mult
		}
	}
	return count, sum, cum
}

func (m *Map) bound(i uint64) float64 {
	if m.Buckets == Linear {
		return float64(i)
	}
	return math.Ldexp(1, int(min(i, 1100)))
}

func (m *Map) lowerBound(i uint64) float64 {
	if i == 0 {
		return 0
	}
	return m.bound(i-1) + 1
}

func decodeKey(labels []Label, key []byte) ([]string, error) {
	values := make([]string, len(labels))
	off := 0
	for i, l := range labels {
		decode := l.Decode
		if decode == nil {
			decode = Uint
		}
		v, err := decode(key[off : off+l.Size])
		if err != nil {
			return nil, fmt.Errorf("label %q: %w", l.Name, err)
		}
		if !utf8.ValidString(v) {
			v = escape([]byte(v))
		}
		values[i], off = v, off+l.Size
	}
	return values, nil
}

// sumCPUs is a u64 value, or the sum of a per-CPU map's values (one
// 8-byte slot per CPU).
func sumCPUs(v []byte) uint64 {
	var n uint64
	for len(v) >= 8 {
		n += binary.LittleEndian.Uint64(v)
		v = v[8:]
	}
	return n
}
