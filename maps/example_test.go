package maps_test

import (
	"fmt"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/maps"
)

func Example() {
	m, err := maps.New(&maps.Spec{
		Name:       "counts",
		Type:       maps.Hash,
		KeySize:    4,
		ValueSize:  8,
		MaxEntries: 64,
	})
	if err != nil {
		panic(err)
	}
	for pid := uint32(1); pid <= 3; pid++ {
		if err := m.Update(pid, uint64(pid*100), maps.UpdateAny); err != nil {
			panic(err)
		}
	}

	// What a helper does for bpf_map_lookup_elem, followed by the
	// program's atomic add on the value.
	key := uint32(2)
	p := m.LookupElem(unsafe.Pointer(&key), 0)
	atomic.AddUint64((*uint64)(p), 1)

	var v uint64
	if err := m.Lookup(uint32(2), &v); err != nil {
		panic(err)
	}
	fmt.Println("pid 2:", v)

	var pid uint32
	var count uint64
	var lines []string
	it := m.Iterate()
	for it.Next(&pid, &count) {
		lines = append(lines, fmt.Sprintf("%d=%d", pid, count))
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	sort.Strings(lines)
	fmt.Println(lines)

	err = m.Update(uint32(2), uint64(0), maps.UpdateNoExist)
	fmt.Println(err, maps.Errno(err))
	// Output:
	// pid 2: 201
	// [1=100 2=201 3=300]
	// map "counts": update: key already exists -17
}

func ExampleNew_perCPU() {
	m, err := maps.New(&maps.Spec{Name: "pkts", Type: maps.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		panic(err)
	}
	key := uint32(0)
	for cpu := range maps.PossibleCPUs() {
		p := m.LookupElem(unsafe.Pointer(&key), cpu)
		*(*uint64)(p) += 5
	}
	var perCPU []uint64
	if err := m.Lookup(uint32(0), &perCPU); err != nil {
		panic(err)
	}
	var total uint64
	for _, v := range perCPU {
		total += v
	}
	fmt.Println(len(perCPU) == maps.PossibleCPUs(), total == uint64(5*maps.PossibleCPUs()))
	// Output: true true
}

func ExampleNewReader() {
	m, err := maps.New(&maps.Spec{Name: "events", Type: maps.RingBuf, MaxEntries: 1 << 16})
	if err != nil {
		panic(err)
	}
	rb := m.(maps.RingBufMap)
	rd, err := maps.NewReader(m)
	if err != nil {
		panic(err)
	}
	defer rd.Close()

	_ = rb.Output([]byte("hello"), 0)
	p := rb.Reserve(5) // bpf_ringbuf_reserve
	copy(unsafe.Slice((*byte)(p), 5), "world")
	maps.RingBufOf(p).Submit(p, 0) // bpf_ringbuf_submit finds the ring from the pointer

	recs := make([]maps.Record, 8)
	n, err := rd.ReadBatch(recs)
	if err != nil {
		panic(err)
	}
	for _, r := range recs[:n] {
		fmt.Println(string(r.RawSample))
	}
	// Output:
	// hello
	// world
}

func ExampleNew_lpmTrie() {
	m, err := maps.New(&maps.Spec{Name: "routes", Type: maps.LPMTrie, KeySize: 8, ValueSize: 4,
		MaxEntries: 16, Flags: maps.FlagNoPrealloc})
	if err != nil {
		panic(err)
	}
	type key struct {
		Prefixlen uint32
		Addr      [4]byte
	}
	_ = m.Update(key{8, [4]byte{10}}, uint32(1), maps.UpdateAny)
	_ = m.Update(key{24, [4]byte{10, 1, 2}}, uint32(2), maps.UpdateAny)
	for _, a := range [][4]byte{{10, 1, 2, 3}, {10, 9, 9, 9}, {11, 0, 0, 1}} {
		var v uint32
		err := m.Lookup(key{32, a}, &v)
		fmt.Println(a, v, err != nil)
	}
	// Output:
	// [10 1 2 3] 2 false
	// [10 9 9 9] 1 false
	// [11 0 0 1] 0 true
}
