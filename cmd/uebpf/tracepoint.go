package main

import (
	"bytes"
	"flag"
	"fmt"

	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/tracepoint"
)

var tracepointHeaderCmd = &command{
	name:    "tracepoint header",
	summary: "write the C header of a tracepoint's payload",
	detail: `Tracepoint header writes the C header of a tracepoint described by a
field spec, for programs that attach to it: the CLI cannot see the
application's Go types (applications generate theirs with
tracepoint.WriteHeader).`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		name := fs.String("name", "", "the tracepoint's name, `provider:name`")
		fields := fs.String("fields", "", "the payload's fields, `SPEC`: name:type,... (u8..u64, s8..s64, f32, f64, bool, string[N])")
		out := fs.String("o", "", "write the header to `file` instead of standard output")
		return func(pos []string, st streams) error {
			if len(pos) > 0 || *name == "" || *fields == "" {
				return usageError("--name and --fields are needed, and nothing else")
			}
			info, err := tracepoint.ParseSpec(*name, *fields)
			if err != nil {
				return fmt.Errorf("tracepoint header: %w", err)
			}
			if *out == "" {
				return tracepoint.Header(st.stdout, info)
			}
			var b bytes.Buffer
			if err := tracepoint.Header(&b, info); err != nil {
				return err
			}
			if err := safefs.WriteFile(*out, b.Bytes(), 0o644); err != nil {
				return fmt.Errorf("tracepoint header: %w", err)
			}
			return nil
		}
	},
}
