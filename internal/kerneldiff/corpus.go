package kerneldiff

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A corpus records programs and what the kernel did with them, so that
// engines can be compared with the kernel where they cannot reach it:
// under qemu-user, which has no bpf(2) (the arm64 build on an amd64
// machine), or on another machine. It is JSON, one program per line.

// Recorded is a program of a corpus and the kernel's outcome.
type Recorded struct {
	Program *Program
	Kernel  Outcome
}

// recordedJSON is a Recorded on a corpus line: the error as its text.
type recordedJSON struct {
	Program *Program `json:"program"`
	R0      uint64   `json:"r0"`
	R0Bits  int      `json:"r0_bits"`
	Value   []byte   `json:"value"`
	Err     string   `json:"err,omitempty"`
}

// WriteRecorded appends a program and the kernel's outcome to a corpus.
func WriteRecorded(w io.Writer, p *Program, kernel Outcome) error {
	r := recordedJSON{Program: p, R0: kernel.R0, R0Bits: kernel.R0Bits, Value: kernel.Value}
	if kernel.Err != nil {
		r.Err = kernel.Err.Error()
	}
	b, err := json.Marshal(&r)
	if err != nil {
		return fmt.Errorf("corpus: seed %d: %w", p.Seed, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadCorpus reads a corpus WriteRecorded wrote.
func ReadCorpus(r io.Reader) ([]Recorded, error) {
	var out []Recorded
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		var r recordedJSON
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("corpus line %d: %w", line, err)
		}
		if r.Program == nil || len(r.Value) != ValueSize || len(r.Program.Value) != ValueSize || (r.R0Bits != 32 && r.R0Bits != 64) {
			return nil, fmt.Errorf("corpus line %d: not a recorded program", line)
		}
		k := Outcome{Engine: EngineKernel, R0: r.R0, R0Bits: r.R0Bits, Value: r.Value}
		if r.Err != "" {
			k.Err = errors.New(r.Err)
		}
		out = append(out, Recorded{Program: r.Program, Kernel: k})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return out, nil
}
