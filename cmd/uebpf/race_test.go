//go:build race

package main

// raceBuild: each plugin process is a race-instrumented test binary that
// takes most of a second to start.
const raceBuild = true
