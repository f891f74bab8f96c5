package conformance

import (
	"fmt"
	"strconv"
	"strings"
)

// PluginHex renders bytes as the plugin protocol sends memory and programs:
// each byte as two lower-case hex digits followed by two spaces.
func PluginHex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 4*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&0x0f], ' ', ' ')
	}
	return string(out)
}

// ParsePluginHex reads what PluginHex writes. It accepts any whitespace
// (newlines included) between bytes, and upper- or lower-case digits.
func ParsePluginHex(s string) ([]byte, error) {
	fields := strings.Fields(s)
	out := make([]byte, 0, len(fields))
	for i, tok := range fields {
		if len(tok) > 2 {
			return nil, fmt.Errorf("plugin hex: item %d %q is not one byte", i+1, tok)
		}
		v, err := strconv.ParseUint(tok, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("plugin hex: item %d %q is not a hex byte", i+1, tok)
		}
		out = append(out, byte(v))
	}
	return out, nil
}
