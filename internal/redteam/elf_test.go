package redteam

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/uebpf/uebpf"
)

// elfObject is a committed object with .data, .rodata and .bss sections.
const elfObject = "../../elf/testdata/loader.bpf.o"

// maxLoadAlloc bounds what loading a broken object may allocate.
const maxLoadAlloc = 64 << 20

// sectionHeader returns the file offset of the header of section name.
func sectionHeader(obj []byte, name string) (int, error) {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return 0, err
	}
	shoff := binary.LittleEndian.Uint64(obj[0x28:])
	shentsize := binary.LittleEndian.Uint16(obj[0x3a:])
	for i, s := range f.Sections {
		if s.Name == name {
			return int(shoff) + i*int(shentsize), nil
		}
	}
	return 0, fmt.Errorf("no section %s", name)
}

// Offsets in an Elf64_Shdr.
const (
	shOffset = 0x18
	shSize   = 0x20
)

type elfMutation struct {
	name      string
	mutate    func(obj []byte) ([]byte, error)
	wantError bool
	skip      string
}

func patchSection(name string, field int, v uint64) func([]byte) ([]byte, error) {
	return func(obj []byte) ([]byte, error) {
		h, err := sectionHeader(obj, name)
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint64(obj[h+field:], v)
		return obj, nil
	}
}

func elfMutations() []elfMutation {
	ms := []elfMutation{
		{name: "bss-size-2.75GiB", mutate: patchSection(".bss", shSize, 0xb0000008), wantError: true},
		{name: "bss-size-max", mutate: patchSection(".bss", shSize, ^uint64(0)), wantError: true},
		{name: "bss-size-1TiB", mutate: patchSection(".bss", shSize, 1<<40), wantError: true},
		{name: "data-size-past-end", mutate: patchSection(".data", shSize, 0xb0000008), wantError: true},
		{name: "data-offset-past-end", mutate: patchSection(".data", shOffset, 0x7fffffff0000), wantError: true},
		{name: "rodata-offset-past-end", mutate: patchSection(".rodata", shOffset, ^uint64(0)-8), wantError: true},
		{name: "shoff-past-end", mutate: func(obj []byte) ([]byte, error) {
			binary.LittleEndian.PutUint64(obj[0x28:], 1<<40)
			return obj, nil
		}, wantError: true},
		{name: "shnum-huge", mutate: func(obj []byte) ([]byte, error) {
			binary.LittleEndian.PutUint16(obj[0x3c:], 0xfff0)
			return obj, nil
		}, wantError: true},
	}
	for _, frac := range []int{1, 4, 2, 3} {
		ms = append(ms, elfMutation{name: fmt.Sprintf("truncated-%d-of-5", frac), wantError: true,
			mutate: func(obj []byte) ([]byte, error) { return obj[:len(obj)*frac/5], nil }})
	}
	ms = append(ms, elfMutation{name: "truncated-last-byte", wantError: true,
		mutate: func(obj []byte) ([]byte, error) { return obj[:len(obj)-1], nil }})
	return ms
}

func TestHostileELF(t *testing.T) {
	orig, err := os.ReadFile(elfObject)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range elfMutations() {
		t.Run(m.name, func(t *testing.T) {
			knownFailing(t, m.skip)
			isolated(t, func(t *testing.T) (string, error) {
				obj, err := m.mutate(bytes.Clone(orig))
				if err != nil {
					return "", err
				}
				for _, opts := range []*uebpf.Options{
					{SkipVerification: true},
					{SkipVerification: true, AllPrograms: true},
					nil,
				} {
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					coll, err := uebpf.Load(bytes.NewReader(obj), opts)
					runtime.ReadMemStats(&after)
					if coll != nil {
						coll.Close()
					}
					alloc := after.TotalAlloc - before.TotalAlloc
					if alloc > maxLoadAlloc {
						return "", fmt.Errorf("loading allocated %d MiB (err %v)", alloc>>20, err)
					}
					if m.wantError && err == nil {
						return "", fmt.Errorf("loaded without an error (%d KiB allocated)", alloc>>10)
					}
					if opts == nil {
						return fmt.Sprintf("%v (%d KiB allocated)", err, alloc>>10), nil
					}
				}
				return "", nil
			})
		})
	}
}
