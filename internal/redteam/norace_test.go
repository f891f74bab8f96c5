//go:build !race

package redteam

const raceBuild = false
