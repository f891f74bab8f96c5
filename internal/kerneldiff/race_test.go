//go:build race

package kerneldiff

// raceBuild: the race detector slows the engines down about tenfold.
const raceBuild = true
