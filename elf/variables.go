package elf

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/maps"
)

// Variable is a global variable of a loaded collection: a window on the
// memory of its data section, which programs read and write directly.
//
// Set and Get copy bytes without synchronising with running programs: set
// variables before runs start, or use atomic instructions in the program
// and your own synchronisation.
type Variable struct {
	name    string
	section string
	mem     []byte // the variable's bytes inside the section's array
	// Type is the variable's BTF type, when the object has BTF.
	Type *btf.Var
}

// Name returns the variable's name.
func (v *Variable) Name() string { return v.name }

// Section returns the data section the variable lives in.
func (v *Variable) Section() string { return v.section }

// Size returns the variable's size in bytes.
func (v *Variable) Size() int { return len(v.mem) }

// Constant reports whether the variable is in a .rodata section: programs
// cannot write it, and Set fails once the collection is loaded.
func (v *Variable) Constant() bool { return isConstantSection(v.section) }

// Set stores in, a fixed-size value (encoding/binary, native byte order) or
// a []byte of the variable's size.
func (v *Variable) Set(in any) error {
	if v.Constant() {
		return fmt.Errorf("variable %s in %s: %w: set it before loading (Options.Variables or the spec)", v.name, v.section, ErrReadOnlyVariable)
	}
	if err := encodeValue(v.mem, in); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	return nil
}

// Get decodes the variable into out: a pointer to a fixed-size value or a
// []byte of the variable's size.
func (v *Variable) Get(out any) error {
	if b, ok := out.([]byte); ok {
		if len(b) != len(v.mem) {
			return fmt.Errorf("variable %s: %d bytes, want %d", v.name, len(b), len(v.mem))
		}
		copy(b, v.mem)
		return nil
	}
	if n := binary.Size(out); n != len(v.mem) {
		return fmt.Errorf("variable %s: %T is %d bytes, the variable %d", v.name, out, n, len(v.mem))
	}
	if _, err := binary.Decode(v.mem, binary.NativeEndian, out); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	return nil
}

// encodeValue writes in over dst, which it must fill exactly.
func encodeValue(dst []byte, in any) error {
	if b, ok := in.([]byte); ok {
		if len(b) != len(dst) {
			return fmt.Errorf("%d bytes, want %d", len(b), len(dst))
		}
		copy(dst, b)
		return nil
	}
	if n := binary.Size(in); n != len(dst) {
		return fmt.Errorf("%T is %d bytes, want %d", in, n, len(dst))
	}
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.NativeEndian, in); err != nil {
		return err
	}
	copy(dst, buf.Bytes())
	return nil
}

// bindVariables gives every variable of spec its window on the created data
// sections and stores the values set on the spec and in values (which win).
func bindVariables(spec *ebpf.CollectionSpec, mt *mapTable, values map[string]any) (map[string]*Variable, error) {
	vars := make(map[string]*Variable, len(spec.Variables))
	for name, vs := range spec.Variables {
		m, ok := mt.byName[vs.SectionName].(maps.MemoryMap)
		if !ok {
			continue // a section that could not be created; its users fail to load
		}
		mem := m.Memory()
		end := uint64(vs.Offset) + uint64(vs.Size())
		if end > uint64(m.ValueSize()) {
			return nil, fmt.Errorf("variable %s: bytes %d..%d outside section %s of %d bytes", name, vs.Offset, end, vs.SectionName, m.ValueSize())
		}
		v := &Variable{name: name, section: vs.SectionName, mem: mem[vs.Offset:end:end], Type: vs.Type}
		// A replaced section has its contents already, and may be mapped
		// read-only (a frozen kernel .rodata).
		if vs.Value != nil && !mt.replaced[vs.SectionName] {
			if err := encodeValue(v.mem, vs.Value); err != nil {
				return nil, fmt.Errorf("variable %s: %w", name, err)
			}
		}
		vars[name] = v
	}
	for name, value := range values {
		v, ok := vars[name]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownVariable, name)
		}
		if mt.replaced[v.section] {
			return nil, fmt.Errorf("variable %s: section %s is a replacement map: set the variable on the spec before creating it", name, v.section)
		}
		if err := encodeValue(v.mem, value); err != nil {
			return nil, fmt.Errorf("variable %s: %w", name, err)
		}
	}
	return vars, nil
}
