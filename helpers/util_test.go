package helpers_test

import (
	"strconv"
	"strings"
)

func itoa(i int) string { return strconv.Itoa(i) }

func replace(s, old, new string) string { return strings.ReplaceAll(s, old, new) }
