package maps

import "fmt"

// Type is a map type, numbered like Linux's enum bpf_map_type.
type Type uint32

// Map types (BPF_MAP_TYPE_*). Only the types listed in the package
// documentation can be created by New; the others exist so that specs coming
// from an ELF object or the kernel print sensibly.
const (
	Unspec              Type = 0
	Hash                Type = 1
	Array               Type = 2
	ProgramArray        Type = 3
	PerfEventArray      Type = 4
	PerCPUHash          Type = 5
	PerCPUArray         Type = 6
	StackTrace          Type = 7
	CgroupArray         Type = 8
	LRUHash             Type = 9
	LRUCPUHash          Type = 10
	LPMTrie             Type = 11
	ArrayOfMaps         Type = 12
	HashOfMaps          Type = 13
	DevMap              Type = 14
	SockMap             Type = 15
	CPUMap              Type = 16
	XSKMap              Type = 17
	SockHash            Type = 18
	CgroupStorage       Type = 19
	ReusePortSockArray  Type = 20
	PerCPUCgroupStorage Type = 21
	Queue               Type = 22
	Stack               Type = 23
	SkStorage           Type = 24
	DevMapHash          Type = 25
	StructOps           Type = 26
	RingBuf             Type = 27
	InodeStorage        Type = 28
	TaskStorage         Type = 29
	BloomFilter         Type = 30
	UserRingBuf         Type = 31
	CgroupStorageNew    Type = 32
	Arena               Type = 33
)

var typeNames = [...]string{
	Unspec: "Unspec", Hash: "Hash", Array: "Array", ProgramArray: "ProgramArray",
	PerfEventArray: "PerfEventArray", PerCPUHash: "PerCPUHash", PerCPUArray: "PerCPUArray",
	StackTrace: "StackTrace", CgroupArray: "CgroupArray", LRUHash: "LRUHash",
	LRUCPUHash: "LRUCPUHash", LPMTrie: "LPMTrie", ArrayOfMaps: "ArrayOfMaps",
	HashOfMaps: "HashOfMaps", DevMap: "DevMap", SockMap: "SockMap", CPUMap: "CPUMap",
	XSKMap: "XSKMap", SockHash: "SockHash", CgroupStorage: "CgroupStorage",
	ReusePortSockArray: "ReusePortSockArray", PerCPUCgroupStorage: "PerCPUCgroupStorage",
	Queue: "Queue", Stack: "Stack", SkStorage: "SkStorage", DevMapHash: "DevMapHash",
	StructOps: "StructOps", RingBuf: "RingBuf", InodeStorage: "InodeStorage",
	TaskStorage: "TaskStorage", BloomFilter: "BloomFilter", UserRingBuf: "UserRingBuf",
	CgroupStorageNew: "CgroupStorage2", Arena: "Arena",
}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint32(t))
}

// HasPerCPUValue reports whether values of the type are per-CPU: one value
// slot per possible CPU.
func (t Type) HasPerCPUValue() bool {
	return t == PerCPUHash || t == PerCPUArray || t == LRUCPUHash || t == PerCPUCgroupStorage
}

// Map creation flags (BPF_F_*), as in Linux's include/uapi/linux/bpf.h.
const (
	FlagNoPrealloc    uint32 = 1 << 0  // BPF_F_NO_PREALLOC
	FlagNoCommonLRU   uint32 = 1 << 1  // BPF_F_NO_COMMON_LRU
	FlagNUMANode      uint32 = 1 << 2  // BPF_F_NUMA_NODE (accepted, ignored)
	FlagRdOnly        uint32 = 1 << 3  // BPF_F_RDONLY: read-only for the Go (syscall) side
	FlagWrOnly        uint32 = 1 << 4  // BPF_F_WRONLY: write-only for the Go (syscall) side
	FlagZeroSeed      uint32 = 1 << 6  // BPF_F_ZERO_SEED: deterministic hash seed
	FlagRdOnlyProg    uint32 = 1 << 7  // BPF_F_RDONLY_PROG: programs may only read
	FlagWrOnlyProg    uint32 = 1 << 8  // BPF_F_WRONLY_PROG: programs may only write
	FlagMmapable      uint32 = 1 << 10 // BPF_F_MMAPABLE
	FlagPreserveElems uint32 = 1 << 11 // BPF_F_PRESERVE_ELEMS
	FlagInnerMap      uint32 = 1 << 12 // BPF_F_INNER_MAP
)

// UpdateFlags select the behaviour of Update, as BPF_ANY, BPF_NOEXIST,
// BPF_EXIST and BPF_F_LOCK do for bpf_map_update_elem. The raw-pointer
// UpdateElem takes the same values as a uint64.
type UpdateFlags uint64

const (
	UpdateAny     UpdateFlags = 0 // BPF_ANY: create or replace
	UpdateNoExist UpdateFlags = 1 // BPF_NOEXIST: create only
	UpdateExist   UpdateFlags = 2 // BPF_EXIST: replace only
	UpdateLock    UpdateFlags = 4 // BPF_F_LOCK: rejected, no map value has a bpf_spin_lock
)

// Ring buffer flags for Output, Submit and Discard (BPF_RB_*).
const (
	RBNoWakeup    uint64 = 1 << 0 // BPF_RB_NO_WAKEUP
	RBForceWakeup uint64 = 1 << 1 // BPF_RB_FORCE_WAKEUP
)

// Ring buffer Query flags (BPF_RB_AVAIL_DATA ...).
const (
	RBAvailData uint64 = 0 // BPF_RB_AVAIL_DATA: bytes produced, not yet consumed
	RBRingSize  uint64 = 1 // BPF_RB_RING_SIZE: size of the data area
	RBConsPos   uint64 = 2 // BPF_RB_CONS_POS: consumer position
	RBProdPos   uint64 = 3 // BPF_RB_PROD_POS: producer position
)

// Ring buffer record header (struct bpf_ringbuf_hdr): a 32-bit length whose
// two top bits are flags, then a 32-bit page offset. Records start 8-byte
// aligned.
const (
	RingBufHeaderSize  = 8
	RingBufBusyBit     = 1 << 31 // BPF_RINGBUF_BUSY_BIT: reserved, not yet committed
	RingBufDiscardBit  = 1 << 30 // BPF_RINGBUF_DISCARD_BIT: committed as discarded
	ringBufMaxRecord   = RingBufDiscardBit - 1
	ringBufKernelPgOff = 3 // data pages start at page 3 of the kernel's struct bpf_ringbuf
)

// Spec describes a map, with the fields of BPF_MAP_CREATE.
type Spec struct {
	Name       string
	Type       Type
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	Flags      uint32
	// Pinning is carried for loaders (LIBBPF_PIN_*); maps does not use it.
	Pinning uint32
	// InnerMap describes the inner map of a map-in-map type. No supported
	// type uses it; New rejects a spec that sets it.
	InnerMap *Spec
}

// Copy returns a deep copy of the spec.
func (s *Spec) Copy() *Spec {
	if s == nil {
		return nil
	}
	c := *s
	c.InnerMap = s.InnerMap.Copy()
	return &c
}
