//go:build amd64 || arm64

package tracepoint

import "unsafe"

// getg returns the runtime's struct of the current goroutine (see goid).
func getg() unsafe.Pointer
