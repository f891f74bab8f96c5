//go:build linux

package kbridge

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/maps"
)

// fakeUserRingBuf is a UserRingBuf over anonymous memory instead of a
// kernel map's pages (no double mapping: records must not wrap).
func fakeUserRingBuf(t *testing.T, size uintptr) *UserRingBuf {
	t.Helper()
	page := uintptr(os.Getpagesize())
	cons, err := unix.MmapPtr(-1, 0, nil, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := unix.MmapPtr(-1, 0, nil, page+2*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	u := &UserRingBuf{name: "fake", cons: cons, prod: prod, data: unsafe.Add(prod, page), size: uint64(size), page: page}
	t.Cleanup(func() { u.Close() })
	return u
}

// TestUserRingBufCommitRejects: Submit and Discard take only records
// Reserve handed out, once, and touch nothing otherwise (issue 16).
func TestUserRingBufCommitRejects(t *testing.T) {
	other := make([]byte, 16)
	tests := []struct {
		name  string
		slice func(s []byte) []byte
		first bool // commit s itself first
	}{
		{"foreign slice", func([]byte) []byte { return other }, false},
		{"nil", func([]byte) []byte { return nil }, false},
		{"record+8", func(s []byte) []byte { return s[8:] }, false},
		{"shorter", func(s []byte) []byte { return s[:8] }, false},
		{"header", func(s []byte) []byte { return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&s[0]), -8)), 16) }, false},
		{"double commit", func(s []byte) []byte { return s }, true},
	}
	for _, tc := range tests {
		for _, discard := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				u := fakeUserRingBuf(t, 4096)
				s, err := u.Reserve(16)
				if err != nil {
					t.Fatal(err)
				}
				hdr := (*uint32)(unsafe.Add(u.data, 0))
				if tc.first {
					if err := u.Submit(s); err != nil {
						t.Fatal(err)
					}
				}
				before := *hdr
				commit := u.Submit
				if discard {
					commit = u.Discard
				}
				if err := commit(tc.slice(s)); !errors.Is(err, maps.ErrInvalid) {
					t.Fatalf("commit: %v, want ErrInvalid", err)
				}
				if *hdr != before {
					t.Errorf("header %#x after a rejected commit, was %#x", *hdr, before)
				}
				if !tc.first {
					if err := u.Submit(s); err != nil || *hdr != 16 {
						t.Errorf("commit of the record: %v, header %#x", err, *hdr)
					}
				}
			})
		}
	}
	// After Close, nothing is reserved and nothing is touched.
	u := fakeUserRingBuf(t, 4096)
	s, err := u.Reserve(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if err := u.Submit(s); !errors.Is(err, maps.ErrInvalid) {
		t.Errorf("Submit after Close: %v", err)
	}
}
