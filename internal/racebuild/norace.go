//go:build !race

package racebuild

// Enabled reports a build with the race detector.
const Enabled = false
