//go:build linux

package kbridge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/kbridge"
)

var (
	u32 = &btf.Int{Name: "u32", Size: 4}
	u64 = &btf.Int{Name: "u64", Size: 8}
	s64 = &btf.Int{Name: "s64", Size: 8, Encoding: btf.Signed}
)

func stats(members ...btf.Member) *btf.Struct {
	var size uint32
	for _, m := range members {
		sz, _ := btf.Sizeof(m.Type)
		size = max(size, uint32(m.Offset.Bytes())+uint32(sz))
	}
	return &btf.Struct{Name: "stats", Size: size, Members: members}
}

func TestBTFCheck(t *testing.T) {
	requireKernel(t)
	kernelValue := stats(
		btf.Member{Name: "count", Type: u64, Offset: 0},
		btf.Member{Name: "threshold", Type: u64, Offset: 64},
	)
	m := newKernelMap(t, &ebpf.MapSpec{Name: "btfmap", Type: ebpf.Hash, KeySize: 4, ValueSize: 16,
		MaxEntries: 4, Key: u32, Value: kernelValue})
	defer m.Close()

	tests := []struct {
		name  string
		key   btf.Type
		value btf.Type
		field string // "" = no error
	}{
		{"same", u32, kernelValue, ""},
		{"copy", &btf.Typedef{Name: "key_t", Type: &btf.Int{Name: "__u32", Size: 4}},
			stats(btf.Member{Name: "count", Type: u64}, btf.Member{Name: "threshold", Type: u64, Offset: 64}), ""},
		{"user side without BTF", nil, nil, ""},
		{"renamed field", u32, stats(btf.Member{Name: "count", Type: u64},
			btf.Member{Name: "limit", Type: u64, Offset: 64}), "value.threshold"},
		{"signedness", u32, stats(btf.Member{Name: "count", Type: u64},
			btf.Member{Name: "threshold", Type: s64, Offset: 64}), "value.threshold"},
		{"narrower field", u32, stats(btf.Member{Name: "count", Type: u32},
			btf.Member{Name: "threshold", Type: u64, Offset: 64}), "value.count"},
		{"key", u64, nil, "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := kbridge.CheckMap(m, tt.key, tt.value)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, kbridge.ErrBTFMismatch) || !strings.Contains(err.Error(), tt.field+":") {
				t.Fatalf("CheckMap: %v; want a mismatch naming %s", err, tt.field)
			}
			t.Log(err)
		})
	}

	// A kernel map without BTF: nothing to compare.
	plain := newKernelMap(t, &ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 16, MaxEntries: 4})
	defer plain.Close()
	if err := kbridge.CheckMap(plain, u64, u32); err != nil {
		t.Fatalf("map without BTF: %v", err)
	}
}
