package filter

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is how a field's bytes are read.
type Kind uint8

const (
	// Unsigned is a little-endian unsigned integer of 1, 2, 4 or 8 bytes,
	// zero-extended to 64 bits and then compared as a signed 64-bit value,
	// as LTTng does.
	Unsigned Kind = iota
	// Signed is a little-endian two's complement integer of 1, 2, 4 or 8
	// bytes, sign-extended to 64 bits.
	Signed
	// Float is an IEEE 754 binary32 (Size 4) or binary64 (Size 8) number;
	// binary32 values widen to binary64 before they are compared.
	Float
	// String is a fixed-size [Size]byte array read as a NUL-terminated
	// string: at most Size bytes, not terminated when full.
	String
	// Bool is one byte, 0 or 1, compared as the unsigned number it holds.
	Bool
)

func (k Kind) String() string {
	switch k {
	case Unsigned:
		return "unsigned"
	case Signed:
		return "signed"
	case Float:
		return "float"
	case String:
		return "string"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Field is a value of the record a filter reads, found by name.
type Field struct {
	Name   string // "status", or a context field such as "$ctx.vtid"
	Kind   Kind
	Size   int // 1, 2, 4, 8 for numbers (4 or 8 for Float); N for String
	Offset int // byte offset in the record the program's r1 points to
}

// check reports what is wrong with f, if anything.
func (f *Field) check() error {
	if f.Offset < 0 || f.Offset > 1<<15-16 {
		return fmt.Errorf("field %q: offset %d out of range", f.Name, f.Offset)
	}
	switch f.Kind {
	case Unsigned, Signed:
		if f.Size != 1 && f.Size != 2 && f.Size != 4 && f.Size != 8 {
			return fmt.Errorf("field %q: an integer has 1, 2, 4 or 8 bytes, not %d", f.Name, f.Size)
		}
	case Float:
		if f.Size != 4 && f.Size != 8 {
			return fmt.Errorf("field %q: a float has 4 or 8 bytes, not %d", f.Name, f.Size)
		}
	case Bool:
		if f.Size != 1 {
			return fmt.Errorf("field %q: a bool has 1 byte, not %d", f.Name, f.Size)
		}
	case String:
		if f.Size < 1 || f.Size > maxStringSize {
			return fmt.Errorf("field %q: a string has 1 to %d bytes, not %d", f.Name, maxStringSize, f.Size)
		}
	default:
		return fmt.Errorf("field %q: unknown kind %d", f.Name, f.Kind)
	}
	if f.Offset+f.Size > 1<<15 {
		return fmt.Errorf("field %q: ends past 32 KiB", f.Name)
	}
	return nil
}

// maxStringSize bounds string fields: the generated code is unrolled
// over their bytes.
const maxStringSize = 1024

// ParseSpec parses a field list "name:type,..." where type is one of u8
// u16 u32 u64 s8 s16 s32 s64 f32 f64 string[N] (and bool, a u8). It lays the fields out in
// order as a C struct would: each number aligned to its size, strings to
// one byte.
func ParseSpec(spec string) ([]Field, error) {
	var fields []Field
	off := 0
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		name, typ, ok := strings.Cut(item, ":")
		name, typ = strings.TrimSpace(name), strings.TrimSpace(typ)
		if !ok || name == "" || typ == "" {
			return nil, fmt.Errorf("field spec %q: want name:type", item)
		}
		if seen[name] {
			return nil, fmt.Errorf("field spec: %q twice", name)
		}
		seen[name] = true
		f := Field{Name: name}
		switch typ {
		case "u8", "u16", "u32", "u64":
			f.Kind = Unsigned
		case "bool":
			f.Kind, typ = Bool, "u8"
		case "s8", "s16", "s32", "s64":
			f.Kind = Signed
		case "f32", "f64":
			f.Kind = Float
		default:
			n, ok := strings.CutPrefix(typ, "string[")
			n, ok2 := strings.CutSuffix(n, "]")
			if !ok || !ok2 {
				return nil, fmt.Errorf("field spec %q: unknown type %q (want u8..u64, s8..s64, f32, f64 or string[N])", item, typ)
			}
			size, err := strconv.Atoi(n)
			if err != nil {
				return nil, fmt.Errorf("field spec %q: string size: %w", item, err)
			}
			f.Kind, f.Size = String, size
		}
		if f.Kind != String {
			bits, _ := strconv.Atoi(typ[1:])
			f.Size = bits / 8
			off = (off + f.Size - 1) &^ (f.Size - 1)
		}
		f.Offset = off
		if err := f.check(); err != nil {
			return nil, fmt.Errorf("field spec: %w", err)
		}
		off += f.Size
		fields = append(fields, f)
	}
	return fields, nil
}
