package maps

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
)

// Limits taken from Linux.
const (
	maxBPFStack     = 512       // MAX_BPF_STACK: largest hash key
	kmallocMaxSize  = 1 << 22   // KMALLOC_MAX_SIZE on x86-64 (4 MiB)
	pcpuMinUnitSize = 32 << 10  // PCPU_MIN_UNIT_SIZE: largest per-CPU value
	maxHashBuckets  = 1 << 28   // n_buckets limit (U32_MAX / sizeof(struct bucket))
	lpmDataSizeMax  = 256       // LPM_DATA_SIZE_MAX
	lpmKeySizeMin   = 4 + 1     // LPM_KEY_SIZE_MIN
	lpmKeySizeMax   = 4 + 256   // LPM_KEY_SIZE_MAX
	arraySizeLimit  = 1<<32 - 1 // u32 array size limit of array_map_alloc
	pageSize        = 4096
)

var hostPageSize = os.Getpagesize()

const accessFlags = FlagRdOnly | FlagWrOnly | FlagRdOnlyProg | FlagWrOnlyProg

// Creation flags each type accepts (the *_CREATE_FLAG_MASK of Linux).
var allowedFlags = map[Type]uint32{
	Array:        FlagNUMANode | FlagMmapable | accessFlags | FlagInnerMap,
	PerCPUArray:  FlagNUMANode | accessFlags | FlagInnerMap,
	ProgramArray: FlagNUMANode | FlagRdOnly | FlagWrOnly | FlagInnerMap,
	Hash:         FlagNoPrealloc | FlagNUMANode | accessFlags | FlagZeroSeed,
	PerCPUHash:   FlagNoPrealloc | FlagNUMANode | accessFlags | FlagZeroSeed,
	LRUHash:      FlagNoPrealloc | FlagNoCommonLRU | FlagNUMANode | accessFlags | FlagZeroSeed,
	LRUCPUHash:   FlagNoPrealloc | FlagNoCommonLRU | FlagNUMANode | accessFlags | FlagZeroSeed,
	LPMTrie:      FlagNoPrealloc | FlagNUMANode | accessFlags,
	Queue:        FlagNUMANode | accessFlags,
	Stack:        FlagNUMANode | accessFlags,
	RingBuf:      FlagNUMANode,
}

// validate checks a spec the way BPF_MAP_CREATE does.
func validate(spec *Spec) error {
	if spec == nil {
		return fmt.Errorf("nil map spec: %w", ErrInvalid)
	}
	fail := func(err error, format string, args ...any) error {
		return fmt.Errorf("map %q: %s: %w", spec.Name, fmt.Sprintf(format, args...), err)
	}
	allowed, ok := allowedFlags[spec.Type]
	if !ok {
		return fail(ErrNotSupported, "map type %s", spec.Type)
	}
	if spec.InnerMap != nil {
		return fail(ErrInvalid, "inner map given for map type %s", spec.Type)
	}
	if extra := spec.Flags &^ allowed; extra != 0 {
		return fail(ErrInvalid, "flags %#x not allowed for map type %s", extra, spec.Type)
	}
	if spec.Flags&(FlagRdOnly|FlagWrOnly) == FlagRdOnly|FlagWrOnly {
		return fail(ErrInvalid, "flags: both BPF_F_RDONLY and BPF_F_WRONLY")
	}
	if spec.Flags&(FlagRdOnlyProg|FlagWrOnlyProg) == FlagRdOnlyProg|FlagWrOnlyProg {
		return fail(ErrInvalid, "flags: both BPF_F_RDONLY_PROG and BPF_F_WRONLY_PROG")
	}
	switch spec.Type {
	case Array, PerCPUArray, ProgramArray:
		return validateArray(spec, fail)
	case Hash, PerCPUHash, LRUHash, LRUCPUHash:
		return validateHash(spec, fail)
	case LPMTrie:
		return validateLPM(spec, fail)
	case Queue, Stack:
		return validateQueue(spec, fail)
	case RingBuf:
		return validateRingBuf(spec, fail)
	}
	return errors.New("unreachable")
}

type failFunc func(err error, format string, args ...any) error

func validateArray(spec *Spec, fail failFunc) error {
	switch {
	case spec.MaxEntries == 0:
		return fail(ErrInvalid, "max entries 0")
	case spec.KeySize != 4:
		return fail(ErrInvalid, "key size %d, array keys are 4 bytes", spec.KeySize)
	case spec.ValueSize == 0:
		return fail(ErrInvalid, "value size 0")
	case spec.Type == ProgramArray && spec.ValueSize != 4:
		return fail(ErrInvalid, "value size %d, program array values are 4 bytes", spec.ValueSize)
	case spec.ValueSize > kmallocMaxSize:
		return fail(ErrTooBig, "value size %d exceeds %d", spec.ValueSize, kmallocMaxSize)
	case spec.Type == PerCPUArray && spec.ValueSize > pcpuMinUnitSize:
		return fail(ErrTooBig, "per-CPU value size %d exceeds %d", spec.ValueSize, pcpuMinUnitSize)
	}
	if total := uint64(round8(uintptr(spec.ValueSize))) * uint64(spec.MaxEntries); total >= arraySizeLimit-pageSize {
		return fail(ErrNoMemory, "array of %d bytes is too large", total)
	}
	return nil
}

func validateHash(spec *Spec, fail failFunc) error {
	lru := spec.Type == LRUHash || spec.Type == LRUCPUHash
	percpu := spec.Type.HasPerCPUValue()
	switch {
	case spec.MaxEntries == 0:
		return fail(ErrInvalid, "max entries 0")
	case spec.KeySize == 0:
		return fail(ErrInvalid, "key size 0")
	case spec.ValueSize == 0:
		return fail(ErrInvalid, "value size 0")
	case spec.KeySize > maxBPFStack:
		return fail(ErrTooBig, "key size %d exceeds %d", spec.KeySize, maxBPFStack)
	case spec.ValueSize >= kmallocMaxSize-maxBPFStack-64:
		return fail(ErrTooBig, "value size %d is too large", spec.ValueSize)
	case percpu && spec.ValueSize > pcpuMinUnitSize:
		return fail(ErrTooBig, "per-CPU value size %d exceeds %d", spec.ValueSize, pcpuMinUnitSize)
	case lru && spec.Flags&FlagNoPrealloc != 0:
		return fail(ErrNotSupported, "LRU maps need preallocation (BPF_F_NO_PREALLOC set)")
	case spec.MaxEntries > maxHashBuckets:
		return fail(ErrTooBig, "max entries %d exceeds %d", spec.MaxEntries, maxHashBuckets)
	}
	return nil
}

func validateLPM(spec *Spec, fail failFunc) error {
	switch {
	case spec.MaxEntries == 0:
		return fail(ErrInvalid, "max entries 0")
	case spec.Flags&FlagNoPrealloc == 0:
		return fail(ErrInvalid, "LPM trie needs BPF_F_NO_PREALLOC")
	case spec.KeySize < lpmKeySizeMin || spec.KeySize > lpmKeySizeMax:
		return fail(ErrInvalid, "key size %d, LPM keys are a 4-byte prefix length and 1..%d data bytes",
			spec.KeySize, lpmDataSizeMax)
	case spec.ValueSize == 0:
		return fail(ErrInvalid, "value size 0")
	case spec.ValueSize > kmallocMaxSize-lpmDataSizeMax-64:
		return fail(ErrInvalid, "value size %d is too large", spec.ValueSize)
	case spec.MaxEntries > 1<<30:
		return fail(ErrTooBig, "max entries %d exceeds %d", spec.MaxEntries, 1<<30)
	}
	return nil
}

func validateQueue(spec *Spec, fail failFunc) error {
	switch {
	case spec.MaxEntries == 0:
		return fail(ErrInvalid, "max entries 0")
	case spec.KeySize != 0:
		return fail(ErrInvalid, "key size %d, %s maps have no key", spec.KeySize, spec.Type)
	case spec.ValueSize == 0:
		return fail(ErrInvalid, "value size 0")
	case spec.ValueSize > kmallocMaxSize:
		return fail(ErrTooBig, "value size %d exceeds %d", spec.ValueSize, kmallocMaxSize)
	}
	if total := uint64(round8(uintptr(spec.ValueSize))) * uint64(spec.MaxEntries); total >= arraySizeLimit-pageSize {
		return fail(ErrNoMemory, "queue of %d bytes is too large", total)
	}
	return nil
}

func validateRingBuf(spec *Spec, fail failFunc) error {
	switch {
	case spec.KeySize != 0:
		return fail(ErrInvalid, "key size %d, ring buffers have no key", spec.KeySize)
	case spec.ValueSize != 0:
		return fail(ErrInvalid, "value size %d, ring buffers have no value", spec.ValueSize)
	case spec.MaxEntries == 0 || bits.OnesCount32(spec.MaxEntries) != 1 || spec.MaxEntries%uint32(hostPageSize) != 0:
		return fail(ErrInvalid, "max entries %d, ring buffer size must be a power of two multiple of the page size (%d)",
			spec.MaxEntries, hostPageSize)
	}
	return nil
}
