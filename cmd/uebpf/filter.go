package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

const fieldsUsage = "the event record's fields, `SPEC`: name:type,... (u8..u64, s8..s64, f32, f64, bool, string[N])"

var filterEvalCmd = &command{
	name:    "filter eval",
	args:    "EXPR",
	summary: "run an LTTng filter expression on JSON events",
	detail: `Filter eval compiles EXPR, an LTTng filter expression over the fields
--fields describes, verifies it and runs it on each JSON object read from
standard input (one event a line): it prints 1 for the events the filter
keeps and 0 for the others. Put the expression after "--" when it starts
with "-".`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		spec := fs.String("fields", "", fieldsUsage)
		engine := fs.String("engine", defaultEngine, "run on engine `E`: auto (the JIT where it exists), interpreter or jit")
		return func(pos []string, st streams) error {
			return filterCommand(false, *spec, *engine, pos, st)
		}
	},
}

var filterExplainCmd = &command{
	name:    "filter explain",
	args:    "EXPR",
	summary: "print the eBPF code of an LTTng filter expression",
	detail: `Filter explain compiles EXPR, an LTTng filter expression over the fields
--fields describes, and prints its eBPF code in the assembler dialect of
'uebpf asm'.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		spec := fs.String("fields", "", fieldsUsage)
		return func(pos []string, st streams) error {
			return filterCommand(true, *spec, "", pos, st)
		}
	},
}

// filterCommand runs "filter eval" and "filter explain": LTTng filter
// expressions compiled by package filter, for scripts and for looking at
// the code.
func filterCommand(explain bool, spec, engine string, positional []string, st streams) error {
	if spec == "" || len(positional) == 0 {
		return usageError("--fields SPEC and an expression are needed")
	}
	fields, err := filter.ParseSpec(spec)
	if err != nil {
		return usageError(err.Error())
	}
	f, err := filter.Compile(strings.Join(positional, " "), fields)
	if err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			return badArgument{fmt.Errorf("filter: %w", err)}
		}
		return err
	}
	if explain {
		text, err := asm.Disassemble(f.Instructions())
		fmt.Fprint(st.stdout, text)
		return err
	}
	run, err := loadFilter(f, engine)
	if err != nil {
		return err
	}
	return evalEvents(f, fields, run, st.stdin, st.stdout)
}

// loadFilter verifies f's program and loads it on the engine named.
func loadFilter(f *filter.Filter, engine string) (func([]byte) (uint64, error), error) {
	switch engine {
	case "interpreter", "jit":
	case "auto":
		engine = "interpreter"
		if jit.Supported {
			engine = "jit"
		}
	default:
		return nil, usageError(fmt.Sprintf("unknown engine %q (have auto, interpreter, jit)", engine))
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: "filter", Instructions: f.Instructions()}, nil)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", f.Expr(), err)
	}
	proof, err := verifier.Verify(p, &verifier.Options{ContextSize: f.RecordSize()})
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", f.Expr(), err)
	}
	if engine == "interpreter" {
		return p.Run, nil
	}
	jp, err := jit.Compile(p, &jit.Options{Verified: proof})
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", f.Expr(), err)
	}
	return jp.Run, nil
}

// evalEvents reads JSON objects from in, one event each, and prints 1 for
// those the filter keeps and 0 for the others.
func evalEvents(f *filter.Filter, fields []filter.Field, run func([]byte) (uint64, error), in io.Reader, out io.Writer) error {
	size := 0
	byName := map[string]*filter.Field{}
	for i := range fields {
		size = max(size, fields[i].Offset+fields[i].Size)
		byName[fields[i].Name] = &fields[i]
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	dec := json.NewDecoder(in)
	dec.UseNumber() // u64 values stay exact
	for n := 1; ; n++ {
		var event map[string]any
		if err := dec.Decode(&event); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("event %d: %w", n, err)
		}
		record := make([]byte, size)
		for name, v := range event {
			fld, ok := byName[name]
			if !ok {
				return fmt.Errorf("event %d: no field %q in --fields", n, name)
			}
			if err := encodeField(record[fld.Offset:fld.Offset+fld.Size], fld, v); err != nil {
				return fmt.Errorf("event %d: field %q: %w", n, name, err)
			}
		}
		keep, err := run(record[:f.RecordSize()])
		if err != nil {
			return fmt.Errorf("event %d: %w", n, err)
		}
		fmt.Fprintln(w, keep)
	}
}

// encodeField stores a JSON value in a field's bytes, little-endian.
func encodeField(b []byte, f *filter.Field, v any) error {
	switch f.Kind {
	case filter.String:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a string, got %v", v)
		}
		copy(b, s) // the array holds at most len(b) bytes
		return nil
	case filter.Float:
		x, err := jsonFloat(v)
		if err != nil {
			return err
		}
		if f.Size == 4 {
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x)))
		} else {
			binary.LittleEndian.PutUint64(b, math.Float64bits(x))
		}
		return nil
	}
	u, err := jsonInt(v)
	if err != nil {
		return err
	}
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
	return nil
}

// jsonInt reads an integer, signed or unsigned, as its 64-bit pattern;
// wider fields keep its low bytes.
func jsonInt(v any) (uint64, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return uint64(i), nil
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u, nil
		}
		return 0, fmt.Errorf("%s is not a 64-bit integer", x)
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("want an integer, got %v", v)
}

// jsonFloat reads a number, or one of the strings "NaN", "Inf", "-Inf"
// that JSON cannot write as numbers.
func jsonFloat(v any) (float64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	default:
		return 0, fmt.Errorf("want a number, got %v", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("want a number: %w", err)
	}
	return f, nil
}
