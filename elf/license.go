package elf

// gplCompatible reports whether a program license allows GPL-only helpers,
// with the list of Linux's license_is_gpl_compatible.
func gplCompatible(license string) bool {
	switch license {
	case "GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL":
		return true
	}
	return false
}
