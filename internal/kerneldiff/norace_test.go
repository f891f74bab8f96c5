//go:build !race

package kerneldiff

const raceBuild = false
