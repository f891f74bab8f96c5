package elf

import "errors"

// Sentinel errors. Loader errors wrap one of them (or an error of package
// vm or maps) and name the program, section or map concerned.
var (
	// ErrUnsupportedMapType: the object declares a map of a type that has
	// no userspace implementation (maps.New does not create it) and a
	// program loaded into the VM uses it.
	ErrUnsupportedMapType = errors.New("map type not supported in userspace")
	// ErrUnsupportedRelocation: an instruction refers to something the VM
	// cannot provide (kfuncs, ksyms, kconfig externs, symbols of inline asm).
	ErrUnsupportedRelocation = errors.New("unsupported relocation")
	// ErrMissingSymbol: a reference to a function, map or program that the
	// object does not define.
	ErrMissingSymbol = errors.New("missing symbol")
	// ErrGPLOnly: a program whose license is not GPL-compatible calls a
	// helper whose prototype says GPLOnly.
	ErrGPLOnly = errors.New("GPL-only helper called by a program whose license is not GPL-compatible")
	// ErrCORE: a CO-RE relocation cannot be satisfied by the target BTF.
	ErrCORE = errors.New("CO-RE relocation cannot be satisfied")
	// ErrNoTargetBTF: a program has CO-RE relocations but Options.TargetBTF
	// is nil.
	ErrNoTargetBTF = errors.New("program has CO-RE relocations but no target BTF was given (Options.TargetBTF)")
	// ErrUnknownVariable: Options.Variables names a variable the object
	// does not declare.
	ErrUnknownVariable = errors.New("unknown global variable")
	// ErrReadOnlyVariable: a constant (.rodata) variable was set after the
	// collection was loaded.
	ErrReadOnlyVariable = errors.New("variable is read-only once loaded")
	// ErrMapReplacement: a map given in Options.MapReplacements does not
	// match the object's definition (type, sizes, entries).
	ErrMapReplacement = errors.New("replacement map does not match the object's definition")
	// ErrKernelOnlyMap: a program loaded into the VM uses a map that
	// Options.MapReplacements marks as kernel-only (nil: a kernel map with
	// no userspace view, such as a ring buffer the kernel writes).
	ErrKernelOnlyMap = errors.New("map exists only in the kernel")
	// ErrByteOrder: the object was compiled for big-endian BPF (bpfeb).
	ErrByteOrder = errors.New("big-endian objects are not supported")
	// ErrMalformed: the object's section headers are unreadable or
	// describe a section that does not lie inside the file.
	ErrMalformed = errors.New("malformed object")
	// ErrTruncated: the object ends before the headers or sections it
	// declares, as a partly copied or downloaded file does. Errors that
	// wrap it also wrap ErrMalformed.
	ErrTruncated = errors.New("file is truncated")
	// ErrMapTooLarge: the maps of a collection would take more memory
	// than Options.MaxMapMemory allows, or the object's SHT_NOBITS
	// sections (.bss) more than MaxGlobalData (or a smaller
	// Options.MaxMapMemory). The error names the map or section.
	ErrMapTooLarge = errors.New("maps exceed the memory limit")
)
