package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/uebpf/uebpf/internal/conformance"
)

// conformanceCommand runs every .data file of a directory on one engine,
// prints a line per failure and a last line "N passed, M failed".
func conformanceCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	engineName := fs.String("engine", "interpreter", "execution engine")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("conformance takes one directory")
	}
	engine, err := lookupEngine(*engineName)
	if err != nil {
		return err
	}
	tests, err := conformance.LoadDir(pos[0])
	if err != nil {
		return err
	}
	passed, failed := 0, 0
	for _, t := range tests {
		if err := t.Run(engine); err != nil {
			fmt.Fprintf(stdout, "FAIL %v\n", err)
			failed++
			continue
		}
		passed++
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return errFailures
	}
	return nil
}
