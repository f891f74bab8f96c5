package conformance

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Test is one conformance test file.
type Test struct {
	Name      string // file name without ".data"
	Asm       string // the "-- asm" section as written, comments included
	AsmLine   int    // line of the file where Asm starts (1-based), to report assembler errors
	Mem       []byte // memory given to the program; nil when there is none
	Result    uint64 // expected r0, when HasResult
	HasResult bool
	ErrorText string // the "-- error" section: an error the program must cause
	Raw       []byte // the "-- raw" section as bytecode; nil when absent
	// Sections holds the text of every section by name ("asm", "c",
	// "no register offset", ...), for the informational ones.
	Sections map[string]string
}

// knownSections are the section names the suite uses; any other name is
// taken for a typo and rejected.
var knownSections = []string{"asm", "mem", "result", "raw", "error", "c", "no register offset"}

// ParseFile reads and parses one .data file.
func ParseFile(path string) (*Test, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Parse(strings.TrimSuffix(filepath.Base(path), ".data"), f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse parses the text of one test file; name becomes Test.Name.
func Parse(name string, r io.Reader) (*Test, error) {
	t := &Test{Name: name, Sections: map[string]string{}}
	starts := map[string]int{} // section name -> line of its header
	var current string
	var body strings.Builder
	flush := func() error {
		if current != "" {
			t.Sections[current] = body.String()
			if err := t.setSection(current, body.String()); err != nil {
				return fmt.Errorf("section %q (line %d): %w", current, starts[current], err)
			}
		}
		body.Reset()
		return nil
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if header, ok := strings.CutPrefix(line, "-- "); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			current = strings.TrimSpace(header)
			if !slices.Contains(knownSections, current) {
				return nil, fmt.Errorf("line %d: unknown section %q", n, current)
			}
			if prev, dup := starts[current]; dup {
				return nil, fmt.Errorf("line %d: section %q repeats (first at line %d)", n, current, prev)
			}
			starts[current] = n
			if current == "asm" {
				t.AsmLine = n + 1
			}
			continue
		}
		if current != "" {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if _, ok := starts["asm"]; !ok && t.Raw == nil {
		return nil, fmt.Errorf("no \"-- asm\" or \"-- raw\" section")
	}
	return t, nil
}

func (t *Test) setSection(name, text string) error {
	var err error
	switch name {
	case "asm":
		t.Asm = text
	case "mem":
		t.Mem, err = parseMem(text)
	case "result":
		t.Result, t.HasResult, err = parseResult(text)
	case "raw":
		t.Raw, err = parseRaw(text)
	case "error":
		t.ErrorText = strings.TrimSpace(text)
	}
	return err
}

// parseMem reads whitespace-separated hex bytes ("00 01 ff").
func parseMem(text string) ([]byte, error) {
	mem := []byte{}
	for _, tok := range strings.Fields(text) {
		v, err := strconv.ParseUint(tok, 16, 8)
		if err != nil || len(tok) > 2 {
			return nil, fmt.Errorf("%q is not a hex byte", tok)
		}
		mem = append(mem, byte(v))
	}
	return mem, nil
}

// parseResult reads the expected r0: hex with 0x, else decimal, as the
// upstream runner does.
func parseResult(text string) (uint64, bool, error) {
	fields := strings.Fields(text)
	switch len(fields) {
	case 0:
		return 0, false, nil
	case 1:
		v, err := parseUint64(fields[0])
		return v, err == nil, err
	}
	return 0, false, fmt.Errorf("want one value, got %d", len(fields))
}

// parseRaw reads one 64-bit number per slot and returns the bytecode.
func parseRaw(text string) ([]byte, error) {
	code := []byte{}
	for _, tok := range strings.Fields(text) {
		v, err := parseUint64(tok)
		if err != nil {
			return nil, err
		}
		code = binary.LittleEndian.AppendUint64(code, v)
	}
	return code, nil
}

func parseUint64(s string) (uint64, error) {
	digits, base := s, 10
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		digits, base = s[2:], 16
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a 64-bit number", s)
	}
	return v, nil
}
