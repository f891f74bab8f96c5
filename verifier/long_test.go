package verifier_test

import (
	"os"
	"testing"
)

// long reports whether the long tests run: with UEBPF_LONG=1, as .ci/run
// sets, and not with -short. Without it, go test ./... stays within about
// a minute.
func long() bool { return os.Getenv("UEBPF_LONG") == "1" && !testing.Short() }
