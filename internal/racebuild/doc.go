// Package racebuild tells tests whether the race detector is on: it slows
// the engines, the collector and process start-up several times, and
// timing tests and long sweeps adjust to it.
package racebuild
