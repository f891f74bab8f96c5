package vm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	ciliumasm "github.com/cilium/ebpf/asm"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/maps"
)

// DefaultBudget is the instruction budget of a run when neither the program
// nor the Env sets one: about a second of interpretation.
const DefaultBudget = 1 << 30

// Map is a map that a program references through lddw (BPF_PSEUDO_MAP_FD or
// BPF_PSEUDO_MAP_VALUE). The VM treats it as opaque; helpers know its
// concrete type.
type Map any

// DirectMemory is implemented by maps whose values programs address
// directly, such as arrays holding global data. Flags carries
// BPF_F_RDONLY_PROG (0x80), which makes the memory read-only to programs.
type DirectMemory interface {
	Memory() []byte
	Flags() uint32
}

const flagReadOnlyProg = 0x80

// ProgramSpec describes a program before it is loaded.
type ProgramSpec struct {
	Name         string
	Instructions []asm.Instruction
	// Maps are the maps the program's lddw instructions refer to by index.
	// Programs loaded with the same Maps slice share map pointers, so a
	// map pointer stays valid across tail calls between them.
	Maps []Map
}

// Options tune how a program is loaded.
type Options struct {
	// Helpers the program may call. A call to a number not in this set is
	// a load error.
	Helpers Helpers
	// Budget is the default instruction budget of a run (DefaultBudget if 0).
	Budget uint64
	// Timeout is the wall-clock limit of a run (DefaultTimeout if 0; a
	// negative value: none). A run past it ends with a *RunError wrapping
	// ErrTimeout. It is checked each time the run has used a slice of its
	// budget (about 100 µs of work), so a run may overshoot it by that much.
	Timeout time.Duration
}

// Program is a validated, pre-decoded program. It is immutable and safe for
// concurrent use.
type Program struct {
	name    string
	insns   []asm.Instruction
	code    []insn
	funcs   []HelperFunc // helpers by call-site index
	helpers Helpers
	maps    []Map
	regions []region // global data the program addresses directly
	// callbacks are the functions whose addresses lddw (BPF_PSEUDO_FUNC)
	// loads, for helpers such as bpf_loop.
	callbacks []int
	// arrays describes Maps[i] when it is an array that calls to an
	// ArrayLookup helper may index directly (base 0 otherwise).
	arrays []arrayMap
	// hashes describes Maps[i] when it is a hash map of package maps, whose
	// lookups the interpreter answers without the helper (lookup nil
	// otherwise).
	hashes    []hashMap
	lddwIndex int  // slot of the lddw being decoded
	callsX    bool // the program has a callx instruction
	// lean says that a run can call no Go code (no helper call; callx
	// only with no helpers to reach) and so changes nothing of its Env
	// but registers, frames, the stack and what the interpreter
	// records: Run and RunPointer take a short path (see lean.go).
	lean    bool
	id      uint64 // tags the program's Envs in the lean caches
	budget  uint64
	timeout time.Duration
	envs    EnvPool
}

// Load validates spec and prepares it to run.
func Load(spec *ProgramSpec, opts *Options) (*Program, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &Program{
		name:    spec.Name,
		insns:   spec.Instructions,
		helpers: opts.Helpers,
		maps:    spec.Maps,
		budget:  opts.Budget,
		timeout: opts.Timeout,
	}
	if p.budget == 0 {
		p.budget = DefaultBudget
	}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
	}
	p.findArrays()
	if err := p.decode(); err != nil {
		return nil, err
	}
	p.lean = len(p.funcs) == 0 && (!p.callsX || len(p.helpers) == 0)
	p.id = lastProgramID.Add(1)
	return p, nil
}

// LoadBytes loads raw little-endian bytecode.
func LoadBytes(name string, code []byte, opts *Options) (*Program, error) {
	insns, err := asm.Decode(code)
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	return Load(&ProgramSpec{Name: name, Instructions: insns}, opts)
}

// LoadCilium loads cilium/ebpf instructions. References (maps, functions)
// must already be resolved to constants and offsets.
func LoadCilium(name string, insns ciliumasm.Instructions, opts *Options) (*Program, error) {
	var buf bytes.Buffer
	if err := insns.Marshal(&buf, binary.LittleEndian); err != nil {
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	return LoadBytes(name, buf.Bytes(), opts)
}

// Name returns the program's name.
func (p *Program) Name() string { return p.name }

// Instructions returns the program's instruction slots. Callers must not
// modify them.
func (p *Program) Instructions() []asm.Instruction { return p.insns }

// Maps returns the maps the program references. Callers must not modify it.
func (p *Program) Maps() []Map { return p.maps }

// Helpers returns the helper set the program was loaded with.
func (p *Program) Helpers() Helpers { return p.helpers }

// Budget returns the program's default instruction budget.
func (p *Program) Budget() uint64 { return p.budget }

// Timeout returns the program's time limit per run (negative: none).
func (p *Program) Timeout() time.Duration { return p.timeout }

// mapPointer returns the value a program sees in a register loaded with a
// reference to Maps()[i]: the address of that entry of the map table.
func (p *Program) mapPointer(i int) uint64 {
	return uint64(uintptr(unsafe.Pointer(&p.maps[i])))
}

// Map resolves a map pointer that a program passed to a helper. It returns
// false for any value that is not one of the program's map pointers.
func (e *Env) Map(ptr uint64) (Map, bool) {
	maps := e.prog.maps
	if len(maps) == 0 {
		return nil, false
	}
	off := ptr - uint64(uintptr(unsafe.Pointer(&maps[0])))
	if off%mapEntrySize != 0 || off/mapEntrySize >= uint64(len(maps)) {
		return nil, false
	}
	return maps[off/mapEntrySize], true
}

// Run runs the program with mem as its context (r1 = its address, r2 = its
// length) and returns r0. It takes an Env from the program's pool, or,
// for a program that calls no helpers, from a cache per P (see lean.go).
func (p *Program) Run(mem []byte) (uint64, error) {
	// One call, so that Run inlines into its callers.
	return p.run(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)), false)
}

// RunPointer runs the program with the size bytes at ctx as its context.
// The caller keeps ctx alive for the duration of the call.
func (p *Program) RunPointer(ctx unsafe.Pointer, size uintptr) (uint64, error) {
	return p.run(ctx, size, true)
}

// runPooled is Run (the context's r1 is 0 when it is empty) and
// RunPointer (pointer: r1 = ctx) with an Env from the program's pool.
func (p *Program) runPooled(ctx unsafe.Pointer, size uintptr, pointer bool) (uint64, error) {
	e := p.envs.Get()
	e.SetContextPointer(ctx, size, true)
	if size == 0 && !pointer {
		e.st.Args[0] = 0 // as SetContext
	}
	r0, err := p.Exec(e)
	p.envs.Put(e)
	return r0, err
}

// arrayMap is what an inline array lookup needs of an array map.
type arrayMap struct {
	base, stride, n uint64
}

// hashMap is what engine-side hash lookups and updates need of a hash map.
type hashMap struct {
	h         unsafe.Pointer // the map's handle (engine.HashOf)
	keySize   uint64
	valueSize uint64
	writable  bool // values are writable by programs (not BPF_F_RDONLY_PROG)
}

// findArrays fills p.arrays and p.hashes, and makes every such array's memory a static
// region of the program: inline lookups then hand out addresses that the
// run's checks already allow, as the lookup helper would register them.
func (p *Program) findArrays() {
	p.arrays = make([]arrayMap, len(p.maps))
	p.hashes = make([]hashMap, len(p.maps))
	for i, m := range p.maps {
		if mm, ok := m.(maps.Map); ok {
			if h := engine.HashOf(mm); h != nil {
				p.hashes[i] = hashMap{h: h, keySize: uint64(mm.KeySize()),
					valueSize: uint64(mm.ValueSize()), writable: !mm.ReadOnlyProg()}
				continue
			}
		}
		a, ok := m.(maps.MemoryMap)
		if !ok || a.Type() != maps.Array || a.KeySize() != 4 {
			continue
		}
		mem := a.Memory()
		stride := (uint64(a.ValueSize()) + 7) &^ 7
		n := uint64(a.MaxEntries())
		if len(mem) == 0 || stride*n > uint64(len(mem)) {
			continue
		}
		base := unsafe.Pointer(unsafe.SliceData(mem))
		p.addStaticRegion(base, len(mem), !a.ReadOnlyProg())
		p.arrays[i] = arrayMap{base: uint64(uintptr(base)), stride: stride, n: n}
	}
}
