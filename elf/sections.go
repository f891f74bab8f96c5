package elf

import "strings"

// UserspacePrefix starts the section names of userspace programs.
const UserspacePrefix = "uebpf"

// IsUserspaceSection reports whether a program of section sec runs in the
// VM: sections "uebpf" and "uebpf/...". Every other section is a kernel
// program type.
func IsUserspaceSection(sec string) bool {
	return sec == UserspacePrefix || strings.HasPrefix(sec, UserspacePrefix+"/")
}

// TracepointName returns <name> for a section "uebpf/tracepoint/<name>", the
// application tracepoint a program attaches to.
func TracepointName(sec string) (string, bool) {
	name, ok := strings.CutPrefix(sec, UserspacePrefix+"/tracepoint/")
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// isDataSection reports whether a map of the collection spec is a global
// data section, as cilium/ebpf names them.
func isDataSection(name string) bool {
	return name == ".bss" || strings.HasPrefix(name, ".data") || strings.HasPrefix(name, ".rodata")
}

// isConstantSection reports whether a data section holds constants.
func isConstantSection(name string) bool { return strings.HasPrefix(name, ".rodata") }
