package kbridge

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// ErrBTFMismatch is wrapped by the errors of CheckMap and CheckTypes: the
// two sides of a shared map disagree on a key or value layout.
var ErrBTFMismatch = errors.New("BTF types differ")

// CheckMap compares the key and value types the kernel map m was created
// with (its BTF) against key and value, the types the userspace side
// expects (typically from the ELF object's MapSpec, since maps.Spec carries
// no BTF). A nil type, or a kernel map without BTF, skips that side: the
// check applies only when both sides carry BTF. The error names the first
// field that differs.
func CheckMap(m *ebpf.Map, key, value btf.Type) error {
	name := kernelName(m)
	kkey, kval, err := kernelTypes(m)
	if err != nil {
		return fmt.Errorf("map %q: read BTF: %w", name, err)
	}
	return CheckTypes(name, kkey, kval, key, value)
}

// CheckTypes compares kernel-side and user-side key and value types of the
// map called name structurally: sizes, kinds, integer signedness, and
// struct/union members by name, offset and type, recursively (typedefs and
// qualifiers are looked through). Pairs with a nil side are not checked.
func CheckTypes(name string, kernelKey, kernelValue, userKey, userValue btf.Type) error {
	if kernelKey != nil && userKey != nil {
		if err := compareTypes("key", kernelKey, userKey, 0); err != nil {
			return fmt.Errorf("map %q: %w", name, err)
		}
	}
	if kernelValue != nil && userValue != nil {
		if err := compareTypes("value", kernelValue, userValue, 0); err != nil {
			return fmt.Errorf("map %q: %w", name, err)
		}
	}
	return nil
}

func mismatch(path, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", path, fmt.Sprintf(format, args...), ErrBTFMismatch)
}

func compareTypes(path string, k, u btf.Type, depth int) error {
	if depth > 32 {
		return nil // deeper than any sane map layout; cycles go through pointers
	}
	k, u = btf.UnderlyingType(k), btf.UnderlyingType(u)
	ks, kerr := btf.Sizeof(k)
	us, uerr := btf.Sizeof(u)
	if kerr == nil && uerr == nil && ks != us {
		return mismatch(path, "kernel has %v (%d bytes), user side %v (%d bytes)", k, ks, u, us)
	}
	switch kt := k.(type) {
	case *btf.Int:
		ut, ok := u.(*btf.Int)
		if !ok {
			return mismatch(path, "kernel has %v, user side %v", k, u)
		}
		if kt.Encoding&btf.Signed != ut.Encoding&btf.Signed {
			return mismatch(path, "kernel has %v, user side %v (signedness)", k, u)
		}
	case *btf.Struct:
		ut, ok := u.(*btf.Struct)
		if !ok {
			return mismatch(path, "kernel has a struct, user side %v", u)
		}
		return compareMembers(path, kt.Members, ut.Members, depth)
	case *btf.Union:
		ut, ok := u.(*btf.Union)
		if !ok {
			return mismatch(path, "kernel has a union, user side %v", u)
		}
		return compareMembers(path, kt.Members, ut.Members, depth)
	case *btf.Array:
		ut, ok := u.(*btf.Array)
		if !ok {
			return mismatch(path, "kernel has an array, user side %v", u)
		}
		if kt.Nelems != ut.Nelems {
			return mismatch(path, "kernel has %d elements, user side %d", kt.Nelems, ut.Nelems)
		}
		return compareTypes(path+"[]", kt.Type, ut.Type, depth+1)
	case *btf.Enum:
		if _, ok := u.(*btf.Enum); !ok {
			if _, ok := u.(*btf.Int); !ok {
				return mismatch(path, "kernel has an enum, user side %v", u)
			}
		}
	case *btf.Pointer:
		if _, ok := u.(*btf.Pointer); !ok {
			return mismatch(path, "kernel has a pointer, user side %v", u)
		}
	default:
		if fmt.Sprintf("%T", k) != fmt.Sprintf("%T", u) {
			return mismatch(path, "kernel has %v, user side %v", k, u)
		}
	}
	return nil
}

func compareMembers(path string, km, um []btf.Member, depth int) error {
	for i := range max(len(km), len(um)) {
		if i >= len(km) {
			return mismatch(path+"."+um[i].Name, "only on the user side")
		}
		if i >= len(um) {
			return mismatch(path+"."+km[i].Name, "only on the kernel side")
		}
		k, u := km[i], um[i]
		p := path + "." + k.Name
		if k.Name != u.Name {
			return mismatch(p, "user side has field %q here", u.Name)
		}
		if k.Offset != u.Offset || k.BitfieldSize != u.BitfieldSize {
			return mismatch(p, "kernel offset %d bits (bitfield %d), user side %d bits (bitfield %d)",
				k.Offset, k.BitfieldSize, u.Offset, u.BitfieldSize)
		}
		if err := compareTypes(p, k.Type, u.Type, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// mapInfo is the start of the kernel's struct bpf_map_info, up to the BTF
// type IDs of key and value, which cilium/ebpf's MapInfo does not expose.
type mapInfo struct {
	typ, id, keySize, valueSize, maxEntries, mapFlags uint32
	name                                              [16]byte
	ifindex, btfVmlinuxValueTypeID                    uint32
	netnsDev, netnsIno                                uint64
	btfID, btfKeyTypeID, btfValueTypeID               uint32
	btfVmlinuxID                                      uint32
	mapExtra                                          uint64
}

// kernelTypes returns the BTF key and value types of m (nil, nil if it
// has none).
func kernelTypes(m *ebpf.Map) (key, value btf.Type, err error) {
	var info mapInfo
	// union bpf_attr for BPF_OBJ_GET_INFO_BY_FD: bpf_fd, info_len, info.
	attr := struct {
		fd, infoLen uint32
		info        uint64
	}{uint32(m.FD()), uint32(unsafe.Sizeof(info)), uint64(uintptr(unsafe.Pointer(&info)))}
	if err := objGetInfoByFD(unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
		return nil, nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD: %w", err)
	}
	if info.btfID == 0 {
		return nil, nil, nil
	}
	h, err := btf.NewHandleFromID(btf.ID(info.btfID))
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	spec, err := h.Spec(nil)
	if err != nil {
		return nil, nil, err
	}
	if info.btfKeyTypeID != 0 {
		if key, err = spec.TypeByID(btf.TypeID(info.btfKeyTypeID)); err != nil {
			return nil, nil, err
		}
	}
	if info.btfValueTypeID != 0 {
		if value, err = spec.TypeByID(btf.TypeID(info.btfValueTypeID)); err != nil {
			return nil, nil, err
		}
	}
	return key, value, nil
}
