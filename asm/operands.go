package asm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseNumber parses an optionally signed decimal or 0x-prefixed hex
// integer. Octal and underscores are not accepted: "010" is ten, as in the
// conformance suite.
func parseNumber(s string) (neg bool, mag uint64, err error) {
	t := s
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	if len(t) >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		base = 16
		t = t[2:]
	}
	if t == "" || t[0] == '+' || t[0] == '-' {
		return false, 0, fmt.Errorf("%q is not a number", s)
	}
	mag, err = strconv.ParseUint(t, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return false, 0, fmt.Errorf("%s does not fit in 64 bits", s)
		}
		return false, 0, fmt.Errorf("%q is not a number", s)
	}
	return neg, mag, nil
}

// parseImm32 accepts -2^31..2^32-1; values above 2^31-1 are the two's
// complement of a negative immediate (0xffffffff is -1).
func parseImm32(s string) (int32, error) {
	neg, mag, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	if neg {
		if mag > 1<<31 {
			return 0, fmt.Errorf("immediate %s does not fit in 32 bits", s)
		}
		return int32(-int64(mag)), nil
	}
	if mag > math.MaxUint32 {
		return 0, fmt.Errorf("immediate %s does not fit in 32 bits", s)
	}
	return int32(uint32(mag)), nil
}

// parseImm64 accepts -2^63..2^64-1 and returns the 64-bit pattern.
func parseImm64(s string) (uint64, error) {
	neg, mag, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	if neg {
		if mag > 1<<63 {
			return 0, fmt.Errorf("immediate %s does not fit in 64 bits", s)
		}
		return -mag, nil
	}
	return mag, nil
}

// parseSigned parses a value that must fit in a signed field of the given
// width (jump offsets, memory displacements).
func parseSigned(s string, bits uint) (int64, error) {
	neg, mag, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	limit := uint64(1) << (bits - 1)
	if neg && mag <= limit {
		return -int64(mag), nil
	}
	if !neg && mag < limit {
		return int64(mag), nil
	}
	return 0, fmt.Errorf("%s does not fit in a signed %d-bit field", s, bits)
}

var registerNames = func() map[string]uint8 {
	m := map[string]uint8{}
	for r := R0; r <= R10; r++ {
		m["%r"+strconv.Itoa(r)] = uint8(r)
	}
	return m
}()

func parseRegister(s string) (uint8, error) {
	if r, ok := registerNames[s]; ok {
		return r, nil
	}
	if strings.HasPrefix(s, "%r") {
		return 0, fmt.Errorf("no register %q (eBPF has %%r0..%%r10)", s)
	}
	return 0, fmt.Errorf("%q is not a register (want %%r0..%%r10)", s)
}

// parseMemory parses "[%rN]", "[%rN+off]" or "[%rN-off]".
func parseMemory(s string) (uint8, int16, error) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return 0, 0, fmt.Errorf("memory operand %q: want [%%rN+off]", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	regText, offText := inner, ""
	if i := strings.IndexAny(inner, "+-"); i >= 0 {
		regText, offText = strings.TrimSpace(inner[:i]), inner[i:]
	}
	reg, err := parseRegister(regText)
	if err != nil {
		return 0, 0, fmt.Errorf("memory operand %s: %w", s, err)
	}
	if offText == "" {
		return reg, 0, nil
	}
	// Allow "[%r1 + 8]": the sign stays, the spaces after it go.
	offText = offText[:1] + strings.TrimSpace(offText[1:])
	off, err := parseSigned(offText, 16)
	if err != nil {
		return 0, 0, fmt.Errorf("memory operand %s: offset %w", s, err)
	}
	return reg, int16(off), nil
}

// isLabel reports whether s can name a label. Labels never start with a
// digit or a sign, so a jump target is unambiguous.
func isLabel(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// isNumeric reports whether a jump target is an offset rather than a label.
func isNumeric(s string) bool {
	return s != "" && (s[0] == '+' || s[0] == '-' || s[0] >= '0' && s[0] <= '9')
}

// parsePseudo parses the source of a pseudo lddw: "kind(imm)" with an
// optional "+next" or "-next" for the immediate of the second slot.
func parsePseudo(s, kind string) (imm, next int32, err error) {
	rest, ok := strings.CutPrefix(s, kind+"(")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want %s(imm)", s, kind)
	}
	inner, after, ok := strings.Cut(rest, ")")
	if !ok {
		return 0, 0, fmt.Errorf("%q: missing )", s)
	}
	if imm, err = parseImm32(strings.TrimSpace(inner)); err != nil {
		return 0, 0, err
	}
	after = strings.TrimSpace(after)
	if after == "" {
		return imm, 0, nil
	}
	if after[0] != '+' && after[0] != '-' {
		return 0, 0, fmt.Errorf("%q: want %s(imm)+next", s, kind)
	}
	v, err := parseSigned(after[:1]+strings.TrimSpace(after[1:]), 32)
	if err != nil {
		return 0, 0, err
	}
	return imm, int32(v), nil
}

// Immediates print in decimal when small and as unsigned hex otherwise;
// both forms assemble back to the same bits.
const decimalLimit = 4096

func formatImm(v int32) string {
	if v >= -decimalLimit && v <= decimalLimit {
		return strconv.Itoa(int(v))
	}
	return fmt.Sprintf("%#x", uint32(v))
}

func formatImm64(v uint64) string {
	if s := int64(v); s >= -decimalLimit && s <= decimalLimit {
		return strconv.FormatInt(s, 10)
	}
	return fmt.Sprintf("%#x", v)
}

// formatDelta prints a jump offset or displacement with an explicit sign.
func formatDelta(v int64) string {
	if v < 0 {
		return strconv.FormatInt(v, 10)
	}
	return "+" + strconv.FormatInt(v, 10)
}

func formatRegister(r uint8) string { return "%r" + strconv.Itoa(int(r)) }

func formatMemory(r uint8, off int16) string {
	if off == 0 {
		return "[" + formatRegister(r) + "]"
	}
	return "[" + formatRegister(r) + formatDelta(int64(off)) + "]"
}
