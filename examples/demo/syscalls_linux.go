package main

import "golang.org/x/sys/unix"

// The numbers events carry for the calls the workers make: Linux's, as
// a kernel program would see them.
const (
	sysGetpid     = unix.SYS_GETPID
	sysNewfstatat = unix.SYS_NEWFSTATAT
	sysNanosleep  = unix.SYS_NANOSLEEP
)
