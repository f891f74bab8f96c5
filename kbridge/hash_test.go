//go:build linux

package kbridge_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

func newKernelHash(t *testing.T, name string) *kbridge.SyscallMap {
	t.Helper()
	m := newKernelMap(t, &ebpf.MapSpec{Name: name, Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 16})
	s, ok := openMap(t, m).(*kbridge.SyscallMap)
	if !ok {
		t.Fatal("Open of a hash map did not return *kbridge.SyscallMap")
	}
	return s
}

// lookupSrc looks up key 1 of map 0 and then runs body with r0 = value.
func lookupSrc(body string) string {
	return `
		stw [%r10-4], 1
		lddw %r1, map_by_fd(0)
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, miss
` + body + `
	miss:
		mov %r0, -1
		exit`
}

// TestHashCopySemantics: VM programs read kernel hash values, cannot write
// into the copies they get (the run fails instead of losing the write), and
// write with bpf_map_update_elem.
func TestHashCopySemantics(t *testing.T) {
	requireKernel(t)
	h := newKernelHash(t, "copies")
	if err := h.Update(uint32(1), uint64(10), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	kernelValue := func() uint64 {
		var v uint64
		if err := h.Kernel().Lookup(uint32(1), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	tests := []struct {
		name    string
		body    string
		wantR0  uint64
		wantErr bool
		want    uint64 // kernel value afterwards
	}{
		{"read", "ldxdw %r0, [%r0+0]\nexit", 10, false, 10},
		{"store refused", "stdw [%r0+0], 99\nmov %r0, 0\nexit", 0, true, 10},
		{"atomic refused", "mov %r1, 1\nlock add [%r0+0], %r1\nmov %r0, 0\nexit", 0, true, 10},
		{"update", `
			stdw [%r10-16], 42
			lddw %r1, map_by_fd(0)
			mov %r2, %r10
			add %r2, -4
			mov %r3, %r10
			add %r3, -16
			mov %r4, 0
			call 2
			exit`, 0, false, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := vmProgram(t, lookupSrc(tt.body), vm.Map(h))
			r0, err := p.Run(nil)
			if tt.wantErr {
				var re *vm.RunError
				if !errors.As(err, &re) {
					t.Fatalf("run: %v, want a *vm.RunError", err)
				}
			} else if err != nil || r0 != tt.wantR0 {
				t.Fatalf("run = %d, %v; want %d", r0, err, tt.wantR0)
			}
			if got := kernelValue(); got != tt.want {
				t.Fatalf("kernel value = %d, want %d", got, tt.want)
			}
		})
	}

	// The raw API: every lookup is a new copy, not connected to the map.
	key := uint32(1)
	p1 := h.LookupElem(unsafe.Pointer(&key), 0)
	p2 := h.LookupElem(unsafe.Pointer(&key), 0)
	if p1 == nil || p2 == nil || p1 == p2 {
		t.Fatalf("LookupElem = %p, %p: want two distinct copies", p1, p2)
	}
	*(*uint64)(p1) = 7
	if got := *(*uint64)(p2); got != 42 {
		t.Fatalf("second copy = %d, want 42", got)
	}
	if got := kernelValue(); got != 42 {
		t.Fatalf("kernel value after writing a copy = %d, want 42", got)
	}
	missing := uint32(9)
	if p := h.LookupElem(unsafe.Pointer(&missing), 0); p != nil {
		t.Fatal("LookupElem of a missing key returned a value")
	}
}

// TestHashErrors checks that kernel errors match maps' sentinels and errnos.
func TestHashErrors(t *testing.T) {
	requireKernel(t)
	h := newKernelHash(t, "errors")
	if err := h.Update(uint32(1), uint64(1), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	err := h.Update(uint32(1), uint64(2), maps.UpdateNoExist)
	if !errors.Is(err, maps.ErrKeyExist) || !errors.Is(err, ebpf.ErrKeyExist) {
		t.Errorf("Update NOEXIST of a present key: %v", err)
	}
	var v uint64
	if err := h.Lookup(uint32(5), &v); !errors.Is(err, maps.ErrKeyNotExist) || !errors.Is(err, unix.ENOENT) {
		t.Errorf("Lookup of a missing key: %v", err)
	}
	key, val := uint32(1), uint64(3)
	err = h.UpdateElem(unsafe.Pointer(&key), unsafe.Pointer(&val), uint64(maps.UpdateNoExist), 0)
	if got := maps.Errno(err); got != -int64(unix.EEXIST) {
		t.Errorf("raw UpdateElem NOEXIST: Errno = %d (%v), want -EEXIST", got, err)
	}
	key = 7
	if got := maps.Errno(h.DeleteElem(unsafe.Pointer(&key))); got != -int64(unix.ENOENT) {
		t.Errorf("raw DeleteElem of a missing key: Errno = %d", got)
	}

	// Iterate (a snapshot) sees the element.
	var k uint32
	n := 0
	for it := h.Iterate(); it.Next(&k, &v); n++ {
		if k != 1 || v != 1 {
			t.Errorf("iterate: %d => %d", k, v)
		}
	}
	if n != 1 {
		t.Errorf("iterate: %d elements, want 1", n)
	}
	h.Close()
	if err := h.Lookup(uint32(1), &v); !errors.Is(err, maps.ErrClosed) {
		t.Errorf("Lookup after Close: %v", err)
	}
}
