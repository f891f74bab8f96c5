//go:build !linux

package channel

import (
	"errors"
	"os"
)

func mapWritableData(*os.File) ([]byte, error) { return nil, errors.New("no mmap") }
