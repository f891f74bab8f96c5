package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/uebpf/uebpf/tracepoint"
)

// tracepointCommand is "uebpf tracepoint header": the C header of a
// tracepoint described by a field spec, since the CLI cannot see the
// application's Go types (applications generate theirs with
// tracepoint.WriteHeader).
func tracepointCommand(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "header" {
		return usageError("tracepoint: want \"tracepoint header --name provider:name --fields SPEC\"")
	}
	fs := flag.NewFlagSet("tracepoint header", flag.ContinueOnError)
	name := fs.String("name", "", "tracepoint name, provider:name")
	fields := fs.String("fields", "", "fields, name:type,... (u8..u64, s8..s64, f32, f64, bool, string[N])")
	out := fs.String("o", "", "write the header to this file instead of standard output")
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 || *name == "" || *fields == "" {
		return usageError("tracepoint header: --name and --fields are needed, and nothing else")
	}
	info, err := tracepoint.ParseSpec(*name, *fields)
	if err != nil {
		return fmt.Errorf("tracepoint header: %w", err)
	}
	if *out == "" {
		return tracepoint.Header(stdout, info)
	}
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("tracepoint header: %w", err)
	}
	if err := tracepoint.Header(f, info); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
