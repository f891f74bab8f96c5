package tracepoint

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSpec describes the tracepoint "provider:name" from a field spec, for
// tools that cannot see the application's Go types (the CLI's "tracepoint
// header"): "name:type,..." with types u8 u16 u32 u64, s8 s16 s32 s64, f32,
// f64, bool and string[N]. Fields are laid out as C lays out the struct.
func ParseSpec(fullName, spec string) (Info, error) {
	provider, name, ok := strings.Cut(fullName, ":")
	if !ok || !validCName(provider) || !validCName(name) {
		return Info{}, fmt.Errorf("tracepoint name %q: want provider:name, both C identifiers", fullName)
	}
	info := Info{Provider: provider, Name: name, Align: 1}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		fname, typ, ok := strings.Cut(item, ":")
		if !ok || !validCName(fname) {
			return Info{}, fmt.Errorf("field spec %q: want name:type with a C identifier", item)
		}
		if seen[fname] {
			return Info{}, fmt.Errorf("field spec: two fields named %q", fname)
		}
		seen[fname] = true
		f, align, err := parseType(typ)
		if err != nil {
			return Info{}, fmt.Errorf("field %s: %w", fname, err)
		}
		f.Name = fname
		f.Offset = (info.Size + align - 1) / align * align
		info.Size = f.Offset + f.Size
		info.Align = max(info.Align, align)
		info.Fields = append(info.Fields, f)
	}
	info.Size = (info.Size + info.Align - 1) / info.Align * info.Align
	return info, nil
}

// parseType reads one type of a field spec.
func parseType(typ string) (Field, int, error) {
	if rest, ok := strings.CutPrefix(typ, "string["); ok {
		n, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
		if err != nil || !strings.HasSuffix(rest, "]") || n < 1 || n > 1<<15 {
			return Field{}, 0, fmt.Errorf("type %q: want string[N] with N from 1 to 32768", typ)
		}
		return Field{Kind: String, Size: n}, 1, nil
	}
	kinds := map[byte]Kind{'u': Unsigned, 's': Signed, 'f': Float}
	switch {
	case typ == "bool":
		return Field{Kind: Bool, Size: 1}, 1, nil
	case len(typ) >= 2:
		k, ok := kinds[typ[0]]
		bits, err := strconv.Atoi(typ[1:])
		valid := bits == 8 || bits == 16 || bits == 32 || bits == 64
		if k == Float {
			valid = bits == 32 || bits == 64
		}
		if ok && err == nil && valid {
			return Field{Kind: k, Size: bits / 8}, bits / 8, nil
		}
	}
	return Field{}, 0, fmt.Errorf("unknown type %q (u8..u64, s8..s64, f32, f64, bool, string[N])", typ)
}
