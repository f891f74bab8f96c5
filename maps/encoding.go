package maps

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"
)

// Go-side encoding of keys and values, like cilium/ebpf:
//
//   - []byte of exactly the right length (copied as is);
//   - unsafe.Pointer to memory of the right size;
//   - encoding.BinaryMarshaler / encoding.BinaryUnmarshaler;
//   - any fixed-size value encoding/binary accepts (integers, floats, bools,
//     arrays and structs of them, and pointers to those), in native byte
//     order. Sizes are binary.Size sizes: a struct with implicit C padding
//     must spell the padding out (`_ [4]byte`).
//
// For per-CPU maps a value is a slice (or array) with one element per
// possible CPU, each encoded as above; valueOut may be a *[]T (resized) or a
// []T of the right length. A []byte (or *[]byte) value is the raw syscall
// layout instead: one ValueSize slot rounded up to 8 bytes per CPU.
//
// Decoding into a nil valueOut discards the value.

var nativeEndian = binary.NativeEndian

func (b *base) marshalKey(key any, op string) ([]byte, error) {
	if b.spec.KeySize == 0 {
		if key != nil {
			return nil, b.wrapf(ErrInvalid, "%s: key %T given, %s maps have no key", op, key, b.spec.Type)
		}
		return nil, nil
	}
	kb, err := marshal(key, int(b.spec.KeySize))
	if err != nil {
		return nil, b.wrapf(ErrInvalid, "%s: key: %v", op, err)
	}
	return kb, nil
}

func (b *base) unmarshalKey(buf []byte, keyOut any, op string) error {
	if err := unmarshal(buf, keyOut); err != nil {
		return b.wrapf(ErrInvalid, "%s: key: %v", op, err)
	}
	return nil
}

func (b *base) marshalValue(value any, op string) ([]byte, error) {
	vs := int(b.spec.ValueSize)
	if !b.spec.Type.HasPerCPUValue() {
		vb, err := marshal(value, vs)
		if err != nil {
			return nil, b.wrapf(ErrInvalid, "%s: value: %v", op, err)
		}
		if len(vb) < b.sysValueSize() { // pad to the 8-byte stride
			vb = append(bytes.Clone(vb), make([]byte, b.sysValueSize()-len(vb))...)
		}
		return vb, nil
	}
	vb, err := b.marshalPerCPU(value)
	if err != nil {
		return nil, b.wrapf(ErrInvalid, "%s: value: %v", op, err)
	}
	return vb, nil
}

func (b *base) marshalPerCPU(value any) ([]byte, error) {
	stride := int(b.valStride)
	want := b.ncpu * stride
	if raw, ok := value.([]byte); ok {
		if len(raw) != want {
			return nil, fmt.Errorf("per-CPU []byte is %d bytes, want %d (%d CPUs x %d)", len(raw), want, b.ncpu, stride)
		}
		return raw, nil
	}
	v := reflect.ValueOf(value)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return nil, fmt.Errorf("per-CPU value must be a slice with one element per possible CPU, got %T", value)
	}
	if v.Len() != b.ncpu {
		return nil, fmt.Errorf("per-CPU value %T has %d elements, want %d (possible CPUs)", value, v.Len(), b.ncpu)
	}
	out := make([]byte, want)
	for i := range b.ncpu {
		eb, err := marshal(v.Index(i).Interface(), int(b.spec.ValueSize))
		if err != nil {
			return nil, fmt.Errorf("CPU %d: %v", i, err)
		}
		copy(out[i*stride:], eb)
	}
	return out, nil
}

func (b *base) unmarshalValue(buf []byte, valueOut any, op string) error {
	var err error
	if !b.spec.Type.HasPerCPUValue() {
		err = unmarshal(buf[:b.spec.ValueSize], valueOut)
	} else {
		err = b.unmarshalPerCPU(buf, valueOut)
	}
	if err != nil {
		return b.wrapf(ErrInvalid, "%s: value: %v", op, err)
	}
	return nil
}

func (b *base) unmarshalPerCPU(buf []byte, valueOut any) error {
	switch out := valueOut.(type) {
	case nil:
		return nil
	case []byte:
		if len(out) != len(buf) {
			return fmt.Errorf("per-CPU []byte is %d bytes, want %d (%d CPUs x %d)", len(out), len(buf), b.ncpu, b.valStride)
		}
		copy(out, buf)
		return nil
	case *[]byte:
		*out = bytes.Clone(buf)
		return nil
	}
	v := reflect.ValueOf(valueOut)
	switch {
	case v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Slice:
		s := v.Elem()
		if s.Len() != b.ncpu {
			s.Set(reflect.MakeSlice(s.Type(), b.ncpu, b.ncpu))
		}
		v = s
	case v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Array:
		v = v.Elem()
	case v.Kind() == reflect.Slice:
	default:
		return fmt.Errorf("per-CPU valueOut must be a *[]T or a []T with one element per possible CPU, got %T", valueOut)
	}
	if v.Len() != b.ncpu {
		return fmt.Errorf("per-CPU valueOut %T has %d elements, want %d (possible CPUs)", valueOut, v.Len(), b.ncpu)
	}
	for i := range b.ncpu {
		slot := buf[i*int(b.valStride):][:b.spec.ValueSize]
		if err := unmarshal(slot, v.Index(i).Addr().Interface()); err != nil {
			return fmt.Errorf("CPU %d: %v", i, err)
		}
	}
	return nil
}

// marshal encodes v into exactly size bytes.
func marshal(v any, size int) ([]byte, error) {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil, fmt.Errorf("nil, want %d bytes", size)
	case []byte:
		b = x
	case unsafe.Pointer:
		if x == nil {
			return nil, fmt.Errorf("nil unsafe.Pointer, want %d bytes", size)
		}
		return bytesAt(x, uintptr(size)), nil
	case encoding.BinaryMarshaler:
		var err error
		if b, err = x.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("%T: %w", v, err)
		}
	case uint8:
		b = []byte{x}
	case int8:
		b = []byte{byte(x)}
	case uint16:
		b = nativeEndian.AppendUint16(nil, x)
	case int16:
		b = nativeEndian.AppendUint16(nil, uint16(x))
	case uint32:
		b = nativeEndian.AppendUint32(nil, x)
	case int32:
		b = nativeEndian.AppendUint32(nil, uint32(x))
	case uint64:
		b = nativeEndian.AppendUint64(nil, x)
	case int64:
		b = nativeEndian.AppendUint64(nil, uint64(x))
	case *uint32:
		if x != nil {
			b = nativeEndian.AppendUint32(nil, *x)
			break
		}
		return nil, fmt.Errorf("nil %T", v)
	case *uint64:
		if x != nil {
			b = nativeEndian.AppendUint64(nil, *x)
			break
		}
		return nil, fmt.Errorf("nil %T", v)
	default:
		n := binary.Size(v)
		if n < 0 {
			return nil, fmt.Errorf("%T is not a fixed-size type", v)
		}
		if n != size {
			return nil, fmt.Errorf("%T is %d bytes, want %d", v, n, size)
		}
		var err error
		if b, err = binary.Append(make([]byte, 0, n), nativeEndian, v); err != nil {
			return nil, fmt.Errorf("%T: %w", v, err)
		}
	}
	if len(b) != size {
		return nil, fmt.Errorf("%T is %d bytes, want %d", v, len(b), size)
	}
	return b, nil
}

// unmarshal decodes buf into out, which must be exactly len(buf) bytes.
func unmarshal(buf []byte, out any) error {
	switch x := out.(type) {
	case nil:
		return nil
	case []byte:
		if len(x) != len(buf) {
			return fmt.Errorf("[]byte is %d bytes, want %d", len(x), len(buf))
		}
		copy(x, buf)
		return nil
	case *[]byte:
		*x = bytes.Clone(buf)
		return nil
	case unsafe.Pointer:
		if x == nil {
			return fmt.Errorf("nil unsafe.Pointer")
		}
		copy(bytesAt(x, uintptr(len(buf))), buf)
		return nil
	case encoding.BinaryUnmarshaler:
		return x.UnmarshalBinary(bytes.Clone(buf))
	case *uint32:
		if len(buf) == 4 && x != nil {
			*x = nativeEndian.Uint32(buf)
			return nil
		}
	case *uint64:
		if len(buf) == 8 && x != nil {
			*x = nativeEndian.Uint64(buf)
			return nil
		}
	}
	if v := reflect.ValueOf(out); v.Kind() != reflect.Pointer || v.IsNil() {
		if v.Kind() != reflect.Slice {
			return fmt.Errorf("cannot decode into %T: need a pointer", out)
		}
	}
	n := binary.Size(out)
	if n < 0 {
		return fmt.Errorf("cannot decode into %T: not a fixed-size type", out)
	}
	if n != len(buf) {
		return fmt.Errorf("%T is %d bytes, want %d", out, n, len(buf))
	}
	if _, err := binary.Decode(buf, nativeEndian, out); err != nil {
		return fmt.Errorf("%T: %w", out, err)
	}
	return nil
}
