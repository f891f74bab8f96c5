package main

import (
	"strings"
	"testing"
)

func TestTracepointHeader(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tracepoint", "header", "--name", "http:request_done", "--fields", "method:string[8],status:u16,duration_us:u64"},
			0, "struct http_request_done {\n\tchar method[8];\n\tunsigned short status;\n\tunsigned char __pad10[6];\n\tunsigned long long duration_us;\n"},
		{[]string{"tracepoint", "header", "--name", "http", "--fields", "a:u8"}, 1, "provider:name"},
		{[]string{"tracepoint", "header", "--name", "a:b", "--fields", "a:u3"}, 1, "unknown type"},
		{[]string{"tracepoint", "header", "--name", "a:b"}, 2, "--fields"},
		{[]string{"tracepoint", "list"}, 2, "want one of: header"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, tt.code, tt.want, stdout, stderr)
			}
		})
	}
}
