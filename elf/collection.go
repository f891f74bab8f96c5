package elf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Collection is a loaded object: its userspace programs, ready to run, and
// its maps.
type Collection struct {
	// Programs loaded into the VM, by function name.
	Programs map[string]*Program
	// Maps by name; global data sections by section name (".rodata",
	// ".data", ".bss", ".data.<name>" ...). Maps that have no userspace
	// implementation are missing (see KernelSpec).
	Maps map[string]maps.Map
	// Variables are the global variables, by name.
	Variables map[string]*Variable
	// KernelSpec holds the programs of kernel sections with all the
	// object's maps, for the kernel bridge; nil when the object has no
	// kernel program.
	KernelSpec *ebpf.CollectionSpec

	mt *mapTable
}

// Program is a program of a collection.
type Program struct {
	// Name is the program's function name.
	Name string
	// Section is the ELF section it came from.
	Section string
	// License is the object's license.
	License string
	// VM is the loaded program.
	VM *vm.Program
	// ContextSize is the size of the type the program's first parameter
	// points to, from BTF (0 when unknown): the context size the verifier
	// assumes when the caller does not give one.
	ContextSize int

	lines []fmt.Stringer // BTF line info per instruction slot, see SourceLine
}

// LoadSpec parses the object file at path. Its SHT_NOBITS sections may
// take DefaultMaxMapMemory bytes at most (see Options.MaxMapMemory).
func LoadSpec(path string) (*ebpf.CollectionSpec, error) {
	return loadSpec(path, DefaultMaxMapMemory)
}

func loadSpec(path string, limit uint64) (*ebpf.CollectionSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	defer f.Close()
	spec, err := parse(f, limit)
	if err != nil {
		return nil, fmt.Errorf("elf: %s: %w", path, err)
	}
	return spec, nil
}

// LoadSpecFromReader parses an object file, as LoadSpec.
func LoadSpecFromReader(r io.ReaderAt) (*ebpf.CollectionSpec, error) {
	return loadSpecFromReader(r, DefaultMaxMapMemory)
}

func loadSpecFromReader(r io.ReaderAt, limit uint64) (*ebpf.CollectionSpec, error) {
	spec, err := parse(r, limit)
	if err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	return spec, nil
}

// parse checks the section headers against the file and limit (see
// checkSections), then calls cilium/ebpf's parser, turning a panic on a
// malformed object into an error: loading untrusted objects must never
// take the host down, nor make it allocate gigabytes first.
func parse(r io.ReaderAt, limit uint64) (spec *ebpf.CollectionSpec, err error) {
	if err := checkSections(r, limit); err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			spec, err = nil, fmt.Errorf("%w: parser panicked: %v", ErrMalformed, v)
		}
	}()
	return ebpf.LoadCollectionSpecFromReader(r)
}

// Load parses the object at path and loads it (LoadSpec + NewCollection).
func Load(path string, opts *Options) (*Collection, error) {
	spec, err := loadSpec(path, mapMemoryLimit(opts))
	if err != nil {
		return nil, err
	}
	coll, err := NewCollection(spec, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return coll, nil
}

// LoadReader parses an object and loads it.
func LoadReader(r io.ReaderAt, opts *Options) (*Collection, error) {
	spec, err := loadSpecFromReader(r, mapMemoryLimit(opts))
	if err != nil {
		return nil, err
	}
	return NewCollection(spec, opts)
}

// NewCollection creates the maps of spec and loads its programs: those of
// userspace sections, or all with Options.AllPrograms. spec is not
// modified.
func NewCollection(spec *ebpf.CollectionSpec, opts *Options) (coll *Collection, err error) {
	if opts == nil {
		opts = &Options{}
	}
	if spec.ByteOrder != nil && spec.ByteOrder != binary.LittleEndian {
		return nil, fmt.Errorf("elf: %w", ErrByteOrder)
	}
	if err := checkMapMemory(spec, opts.MapReplacements, mapMemoryLimit(opts)); err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	mt, err := newMapTable(spec, opts.MapReplacements)
	if err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	defer func() {
		if err != nil {
			mt.close()
		}
	}()
	vars, err := bindVariables(spec, mt, opts.Variables)
	if err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	coll = &Collection{
		Programs:  make(map[string]*Program),
		Maps:      mt.byName,
		Variables: vars,
		mt:        mt,
	}

	names := make([]string, 0, len(spec.Programs))
	for name := range spec.Programs {
		names = append(names, name)
	}
	sort.Strings(names)
	var kernel []string
	for _, name := range names {
		ps := spec.Programs[name]
		user := IsUserspaceSection(ps.SectionName)
		if !user {
			kernel = append(kernel, name)
			if !opts.AllPrograms {
				continue
			}
		}
		p, err := loadProgram(ps, mt, opts)
		if err != nil {
			return nil, fmt.Errorf("elf: program %s (section %s): %w", name, ps.SectionName, err)
		}
		coll.Programs[name] = p
	}

	if err := fillProgramArrays(spec, coll); err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	if len(kernel) > 0 {
		coll.KernelSpec = kernelSpec(spec, kernel)
	}
	return coll, nil
}

// loadProgram prepares one program for the VM.
func loadProgram(ps *ebpf.ProgramSpec, mt *mapTable, opts *Options) (*Program, error) {
	if ps.ByteOrder != nil && ps.ByteOrder != binary.LittleEndian {
		return nil, ErrByteOrder
	}
	insns := slices.Clone(ps.Instructions)
	poisons, err := applyCORE(insns, opts.TargetBTF, opts.DeferCOREErrors)
	if err != nil {
		return nil, err
	}
	insns, helpers := deferPoison(insns, poisons, opts.Helpers, ps.Name)
	code, err := encode(insns, mt.resolve)
	if err != nil {
		return nil, err
	}
	if err := checkHelpers(code, helpers, ps.License); err != nil {
		return nil, err
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: ps.Name, Instructions: code, Maps: mt.table},
		&vm.Options{Helpers: helpers, Budget: opts.Budget, Timeout: opts.Timeout})
	if err != nil {
		return nil, err
	}
	return &Program{
		Name: ps.Name, Section: ps.SectionName, License: ps.License, VM: p,
		ContextSize: contextSize(insns), lines: sourceLines(insns),
	}, nil
}

// fillProgramArrays stores programs into the program arrays whose BTF
// definition lists them (".values = { [0] = &prog }"). Entries naming kernel
// programs that were not loaded are left empty: they are the kernel
// bridge's.
func fillProgramArrays(spec *ebpf.CollectionSpec, coll *Collection) error {
	for name, ms := range spec.Maps {
		if ms.Type != ebpf.ProgramArray || len(ms.Contents) == 0 {
			continue
		}
		m, ok := coll.Maps[name].(maps.ProgArrayMap)
		if !ok {
			continue
		}
		for _, kv := range ms.Contents {
			key, ok1 := kv.Key.(uint32)
			prog, ok2 := kv.Value.(string)
			if !ok1 || !ok2 {
				return fmt.Errorf("map %s: initial entry %v: %v, want a uint32 index and a program name", name, kv.Key, kv.Value)
			}
			p, ok := coll.Programs[prog]
			if !ok {
				if _, exists := spec.Programs[prog]; exists {
					continue
				}
				return fmt.Errorf("map %s: entry %d: %w: program %q", name, key, ErrMissingSymbol, prog)
			}
			if err := m.SetProgram(key, p.VM); err != nil {
				return fmt.Errorf("map %s: entry %d: %w", name, key, err)
			}
		}
	}
	return nil
}

// kernelSpec returns a copy of spec with only the named programs.
func kernelSpec(spec *ebpf.CollectionSpec, names []string) *ebpf.CollectionSpec {
	ks := spec.Copy()
	for name := range ks.Programs {
		if !slices.Contains(names, name) {
			delete(ks.Programs, name)
		}
	}
	return ks
}

// Program returns the program called name, or nil.
func (c *Collection) Program(name string) *Program { return c.Programs[name] }

// Map returns the map called name, or nil.
func (c *Collection) Map(name string) maps.Map { return c.Maps[name] }

// MapError reports why a map of the object has no userspace
// implementation, or nil if it has one (or does not exist).
func (c *Collection) MapError(name string) error { return c.mt.failed[name] }

// SetTailCall stores program prog of the collection at index of the
// program array mapName, for bpf_tail_call.
func (c *Collection) SetTailCall(mapName string, index uint32, prog string) error {
	pa, ok := c.Maps[mapName].(maps.ProgArrayMap)
	if !ok {
		return fmt.Errorf("elf: map %s: %w: not a program array of the collection", mapName, ErrMissingSymbol)
	}
	p, ok := c.Programs[prog]
	if !ok {
		return fmt.Errorf("elf: map %s: %w: program %q is not loaded", mapName, ErrMissingSymbol, prog)
	}
	if err := pa.SetProgram(index, p.VM); err != nil {
		return fmt.Errorf("elf: map %s: index %d: %w", mapName, index, err)
	}
	return nil
}

// Close closes the collection's maps. Programs must not run afterwards.
func (c *Collection) Close() error {
	if c.mt == nil {
		return nil
	}
	err := c.mt.close()
	if err != nil {
		return errors.Join(errors.New("elf: closing maps"), err)
	}
	return nil
}
