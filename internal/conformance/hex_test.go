package conformance

import (
	"bytes"
	"strings"
	"testing"
)

func TestPluginHex(t *testing.T) {
	if got, want := PluginHex([]byte{0x00, 0x01, 0xab, 0xff}), "00  01  ab  ff  "; got != want {
		t.Errorf("PluginHex = %q, want %q", got, want)
	}
	if got := PluginHex(nil); got != "" {
		t.Errorf("PluginHex(nil) = %q, want empty", got)
	}
}

func TestParsePluginHex(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
	}{
		{"00  01  ab  ff  \n", []byte{0, 1, 0xab, 0xff}},
		{"AB\tcd\r\n 7", []byte{0xab, 0xcd, 0x07}},
		{"  \n", []byte{}},
	}
	for _, tt := range tests {
		got, err := ParsePluginHex(tt.in)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("ParsePluginHex(%q) = % x, %v; want % x", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"0g", "100", "0x1"} {
		if _, err := ParsePluginHex(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParsePluginHex(%q) error = %v, want one naming it", bad, err)
		}
	}
}
