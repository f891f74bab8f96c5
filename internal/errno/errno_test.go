package errno

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux the table is the identity: it holds Linux's numbers.
func TestLinuxNumbers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the table against Linux's own numbers")
	}
	for e, n := range linuxNumbers {
		if int64(e) != n || Linux(e) != n {
			t.Errorf("%v: table %d, Linux %d", e, n, int64(e))
		}
	}
	if Linux(ENOTSUPP) != 524 || Linux(unix.ENOENT) != 2 {
		t.Error("ENOTSUPP or ENOENT")
	}
}
