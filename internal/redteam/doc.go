// Package redteam holds uebpf's hostile-program suite (issue 16): tests
// that feed the runtime bytecode, helper arguments and ELF objects written
// to hurt the host — forged pointers handed to helpers, wild and huge
// lengths, tail-call and recursion loops, stack pointers smuggled out of a
// run, broken objects, programs that never end — and check that each one
// ends with an error (a *vm.RunError, a negative errno in r0, a load
// error) instead of a crash, a hang, a runaway allocation or a frozen
// garbage collector.
//
// Every hostile case runs in a child process (the test binary re-executed
// with UEBPF_REDTEAM_CASE naming the case), so that a fatal error, a
// SIGSEGV or heap corruption fails that one case instead of killing the
// run. The child runs the case on the interpreter and on the JIT, in
// checked mode (unverified programs), then forces two garbage collections
// (corruption shows up there) and drains the ring buffer, checking every
// sample against the ring's size.
//
// FuzzHostileHelpers generates programs that call random standard helpers
// with random arguments; its seed corpus also runs under plain go test,
// in a child process.
//
// The package has no non-test code. Long cases run only with UEBPF_LONG=1
// (and not with -short).
package redteam
