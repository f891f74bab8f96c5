package channel

import _ "unsafe" // go:linkname

// A writer is pinned to its P while it writes a record: it cannot be
// preempted or moved, so the P's ring has no other writer meanwhile.

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
