package arm64

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// TestEncodingsLLVM checks what arm64asm cannot decode (the LSE atomics)
// against llvm-mc's disassembler, text for text, and also has llvm-mc
// decode every other random encoding, so that a second decoder agrees
// they are valid instructions. All words go through one llvm-mc run.
func TestEncodingsLLVM(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc-19")
	if err != nil {
		if mc, err = exec.LookPath("llvm-mc"); err != nil {
			t.Skip("llvm-mc-19 not installed (Debian package llvm-19)")
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var cases []encCase
	for _, f := range lseForms {
		for range 2000 {
			c := f.gen(randOpnd(rng))
			if msg := check(c); msg != "" {
				t.Fatalf("%s: %s: %s", f.name, c.desc, msg)
			}
			if c.ok {
				cases = append(cases, c)
			}
		}
	}
	lse := len(cases)
	for _, f := range forms {
		for range 300 {
			if c := f.gen(randOpnd(rng)); c.ok {
				cases = append(cases, c)
			}
		}
	}
	var in bytes.Buffer
	for _, c := range cases {
		w := c.word
		fmt.Fprintf(&in, "0x%02x,0x%02x,0x%02x,0x%02x\n", byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	cmd := exec.Command(mc, "--disassemble", "-triple=aarch64", "-mattr=+lse")
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, stderr.Bytes())
	}
	if stderr.Len() > 0 { // "invalid instruction encoding" warnings
		t.Fatalf("llvm-mc rejects some encodings:\n%s", firstLines(stderr.String(), 20))
	}
	var lines []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		// Drop llvm-mc's remarks, like "acquire semantics dropped since
		// destination is zero" (the architecture says so; see Atomic).
		line, _, _ = strings.Cut(line, "//")
		if line = normalize(line); line != "" && !strings.HasPrefix(line, ".") {
			lines = append(lines, line)
		}
	}
	if len(lines) != len(cases) {
		t.Fatalf("llvm-mc decoded %d instructions from %d words", len(lines), len(cases))
	}
	for i, c := range cases[:lse] {
		if lines[i] != c.want {
			t.Errorf("%#08x: llvm-mc says %q, want %q", c.word, lines[i], c.want)
		}
	}
	t.Logf("%d LSE encodings compared, %d others decoded", lse, len(cases)-lse)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
