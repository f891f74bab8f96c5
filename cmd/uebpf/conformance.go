package main

import (
	"flag"
	"fmt"

	"github.com/uebpf/uebpf/internal/conformance"
)

var conformanceCmd = &command{
	name:    "conformance",
	args:    "DIR",
	summary: "run the eBPF conformance suite's .data files",
	detail: `Conformance runs every .data file of DIR (the bpf_conformance suite's
format) on one engine, prints a line per failure and a last line
"N passed, M failed", and exits 1 if any failed.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		engineName := engineFlag(fs)
		return func(pos []string, st streams) error {
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
					fmt.Fprintf(st.stdout, "FAIL %v\n", err)
					failed++
					continue
				}
				passed++
			}
			fmt.Fprintf(st.stdout, "%d passed, %d failed\n", passed, failed)
			if failed > 0 {
				return errFailures
			}
			return nil
		}
	},
}
