//go:build linux

package kbridge_test

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/maps"
)

func TestFromCollection(t *testing.T) {
	requireKernel(t)
	coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{
		"counters": {Name: "counters", Type: ebpf.Array, KeySize: 4, ValueSize: 12, MaxEntries: 3, Flags: maps.FlagMmapable},
		"state":    {Name: "state", Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 8},
		"events":   {Name: "events", Type: ebpf.RingBuf, MaxEntries: 4096},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := kbridge.FromCollection(coll)
	if err != nil {
		t.Fatal(err)
	}
	coll.Close() // the Maps hold their own clones
	defer func() {
		for _, m := range ms {
			m.Close()
		}
	}()
	if len(ms) != 2 {
		t.Fatalf("FromCollection opened %d maps, want 2 (ring buffers are skipped)", len(ms))
	}
	if _, ok := ms["counters"].(*kbridge.Array); !ok {
		t.Errorf("counters is %T, want *kbridge.Array", ms["counters"])
	}
	if _, ok := ms["state"].(*kbridge.SyscallMap); !ok {
		t.Errorf("state is %T, want *kbridge.SyscallMap", ms["state"])
	}
	if err := ms["state"].Update(uint32(1), uint32(2), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	var v uint32
	if err := ms["state"].Kernel().Lookup(uint32(1), &v); err != nil || v != 2 {
		t.Fatalf("kernel sees %d, %v", v, err)
	}
	if got := ms["counters"].Spec(); got.ValueSize != 12 || got.Name != "counters" || got.Type != maps.Array {
		t.Errorf("spec %+v", got)
	}
}
