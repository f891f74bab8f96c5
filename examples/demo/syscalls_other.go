//go:build !linux

package main

// The numbers events carry for the calls the workers make: Linux
// x86-64's, which the filter does not depend on.
const (
	sysGetpid     = 39
	sysNewfstatat = 262
	sysNanosleep  = 35
)
