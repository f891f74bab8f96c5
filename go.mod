module github.com/uebpf/uebpf

go 1.26.0

require (
	github.com/cilium/ebpf v0.22.0
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)
