package tracepoint

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// The runtime exports no goroutine id. Its stack trace header has it
// ("goroutine 18 [running]:"), which costs microseconds to print and
// parse; the runtime's goroutine struct (g) has it as a word at an offset
// that Go versions move. goid reads that word where getg gives the
// current g (amd64, arm64), at the offset goidOffset finds on first use:
// the only one, in the first 256 bytes, that holds each of several
// goroutines' ids as their stack traces give them. Where there is no
// such offset (a runtime that changed), or no getg, goid parses stack
// traces.

// goidOffset is the offset of the id in the runtime's g, -1 when unknown.
var goidOffset = sync.OnceValue(findGoidOffset)

// goid returns the current goroutine's id.
func goid() uint64 {
	if off := goidOffset(); off >= 0 {
		return *(*uint64)(unsafe.Add(getg(), off))
	}
	return goidFromStack()
}

// goidFromStack reads the current goroutine's id from its stack trace
// header.
func goidFromStack() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// goidScan is how far into g goidOffset looks: within the struct, which
// is several hundred bytes long, and well past the id (152 bytes in with
// Go 1.26 on amd64).
const goidScan = 256

// findGoidOffset returns the offset in g of the goroutine id, or -1.
func findGoidOffset() int {
	if getg() == nil {
		return -1
	}
	// Offsets that hold the id, in this goroutine and in others started
	// one after another, whose ids differ from each other and from
	// small counts and flags.
	var candidates [goidScan / 8]bool
	for i := range candidates {
		candidates[i] = true
	}
	match := func() {
		g, id := getg(), goidFromStack()
		for i := range candidates {
			if *(*uint64)(unsafe.Add(g, 8*i)) != id {
				candidates[i] = false
			}
		}
	}
	match()
	for range 4 {
		done := make(chan struct{})
		go func() {
			match()
			close(done)
		}()
		<-done
	}
	off := -1
	for i, ok := range candidates {
		if ok {
			if off >= 0 {
				return -1 // two offsets match: neither is known to be it
			}
			off = 8 * i
		}
	}
	return off
}
