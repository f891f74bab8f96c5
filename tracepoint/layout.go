package tracepoint

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/uebpf/uebpf/filter"
)

// Kind is how a field's bytes are read: package filter's vocabulary, so
// that a tracepoint's fields are a filter's fields as they are.
type Kind = filter.Kind

const (
	// Unsigned is a little-endian unsigned integer of 1, 2, 4 or 8 bytes.
	Unsigned = filter.Unsigned
	// Signed is a two's complement integer of 1, 2, 4 or 8 bytes.
	Signed = filter.Signed
	// Float is an IEEE 754 float of 4 or 8 bytes.
	Float = filter.Float
	// Bool is one byte, 0 or 1.
	Bool = filter.Bool
	// String is a fixed-size byte array holding a NUL-terminated string
	// (or one that fills the array).
	String = filter.String
)

// Field is one field of a payload or of the context block: where its bytes
// are and how to read them. Name is the name filters and C programs use:
// the Go field's name in snake case (DurationUs is duration_us), or its
// `tracepoint:"name"` tag; "$ctx.timestamp" and so on for the context
// block.
type Field = filter.Field

// ErrBadPayload reports a payload type without a fixed, C-compatible
// layout.
var ErrBadPayload = errors.New("payload type has no fixed C-compatible layout")

// describe returns the fields of a payload struct and checks that Go lays
// it out as C would: every field at a multiple of its alignment (its size,
// or its element's size for arrays), the size a multiple of the largest
// alignment. Blank (_) fields are padding: allowed and not listed.
func describe(t reflect.Type) ([]Field, int, int, error) {
	if t.Kind() != reflect.Struct {
		return nil, 0, 0, fmt.Errorf("%v is a %v, not a struct: %w", t, t.Kind(), ErrBadPayload)
	}
	var fields []Field
	align := 1
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		f, a, err := describeField(sf)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%v.%s: %w", t, sf.Name, err)
		}
		if int(sf.Offset)%a != 0 {
			return nil, 0, 0, fmt.Errorf("%v.%s at offset %d is not %d-byte aligned as in C: %w", t, sf.Name, sf.Offset, a, ErrBadPayload)
		}
		align = max(align, a)
		if sf.Name == "_" {
			continue
		}
		if !sf.IsExported() {
			return nil, 0, 0, fmt.Errorf("%v.%s is unexported (name padding _): %w", t, sf.Name, ErrBadPayload)
		}
		if seen[f.Name] {
			return nil, 0, 0, fmt.Errorf("%v: two fields named %q: %w", t, f.Name, ErrBadPayload)
		}
		seen[f.Name] = true
		fields = append(fields, f)
	}
	if int(t.Size())%align != 0 {
		return nil, 0, 0, fmt.Errorf("%v: size %d is not a multiple of its alignment %d: %w", t, t.Size(), align, ErrBadPayload)
	}
	return fields, int(t.Size()), align, nil
}

// describeField returns a field's description and alignment.
func describeField(sf reflect.StructField) (Field, int, error) {
	name := snakeCase(sf.Name)
	if tag := sf.Tag.Get("tracepoint"); tag != "" {
		if !validCName(tag) {
			return Field{}, 0, fmt.Errorf("tag %q is not a C identifier: %w", tag, ErrBadPayload)
		}
		name = tag
	}
	f := Field{Name: name, Size: int(sf.Type.Size()), Offset: int(sf.Offset)}
	t := sf.Type
	switch t.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.Kind = Unsigned
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.Kind = Signed
	case reflect.Float32, reflect.Float64:
		f.Kind = Float
	case reflect.Bool:
		f.Kind = Bool
	case reflect.Array:
		switch e := t.Elem().Kind(); {
		case e == reflect.Uint8:
			f.Kind = String
			return f, 1, nil
		case sf.Name == "_" && isFixedScalar(e):
			return f, int(t.Elem().Size()), nil // padding
		}
		return Field{}, 0, fmt.Errorf("array of %v: only [N]byte is a field: %w", t.Elem(), ErrBadPayload)
	default:
		return Field{}, 0, fmt.Errorf("type %v has no fixed size (use int64, uint32, [N]byte...): %w", t, ErrBadPayload)
	}
	return f, f.Size, nil
}

func isFixedScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// validCName reports whether s is a C identifier.
func validCName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// roundUp8 is n rounded up to a multiple of 8: where the context block
// starts after a payload of n bytes.
func roundUp8(n int) int { return (n + 7) &^ 7 }

// snakeCase turns a Go name into a C one: DurationUs is duration_us,
// HTTPStatus http_status.
func snakeCase(s string) string {
	r := []rune(s)
	var b []rune
	for i, c := range r {
		upper := 'A' <= c && c <= 'Z'
		if upper && i > 0 {
			prevLower := r[i-1] >= 'a' && r[i-1] <= 'z' || r[i-1] >= '0' && r[i-1] <= '9'
			nextLower := i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z'
			if prevLower || (nextLower && 'A' <= r[i-1] && r[i-1] <= 'Z') {
				b = append(b, '_')
			}
		}
		if upper {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}
