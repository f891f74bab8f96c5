// Package order holds the memory-ordering stores and loads that the
// lock-free producers (maps' ring buffer and stripe locks, a session's
// channel) are built on, each as cheap as the machine allows: on amd64
// plain stores (x86 keeps stores in order, and they pass no earlier load
// or store), written in assembly so that the compiler keeps them where
// they are; elsewhere, and under the race detector (which sees atomics,
// not assembly), atomics or barriers.
package order
