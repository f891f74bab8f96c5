package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/internal/racebuild"
	"github.com/uebpf/uebpf/jit"
)

// asCommandEnv makes the test binary the uebpf command (TestMain): tests
// run it as a process without building one.
const asCommandEnv = "UEBPF_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// long reports whether the long tests run: with UEBPF_LONG=1, as .ci/run
// sets, and not with -short. Without it, go test ./... stays within about
// a minute.
func long() bool { return os.Getenv("UEBPF_LONG") == "1" && !testing.Short() }

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func suite(t *testing.T) (string, []*conformance.Test) {
	dir, ok := conformance.SharedDir()
	if !ok {
		t.Skip("conformance suite not found (../shared/conformance or $UEBPF_CONFORMANCE_DIR)")
	}
	tests, err := conformance.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tests
}

func TestConformanceCommand(t *testing.T) {
	dir, tests := suite(t)
	for name := range engines {
		t.Run(name, func(t *testing.T) {
			code, out, _ := runCLI(t, "", "conformance", "--engine", name, dir)
			want := strconv.Itoa(len(tests)) + " passed, 0 failed\n"
			if code != 0 || !strings.HasSuffix(out, want) {
				t.Fatalf("exit %d, output:\n%s", code, out)
			}
		})
	}
}

func TestConformanceCommandReportsFailures(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "good.data"), []byte("-- asm\nmov %r0, 1\nexit\n-- result\n0x1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.data"), []byte("-- asm\nmov %r0, 2\nexit\n-- result\n0x1\n"), 0o644)
	code, out, _ := runCLI(t, "", "conformance", dir)
	if code != 1 || !strings.Contains(out, "FAIL bad: r0 = 0x2, want 0x1") || !strings.HasSuffix(out, "1 passed, 1 failed\n") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// TestPluginProtocol drives the command as a process (the test binary,
// as uebpf: TestMain) the way the upstream
// bpf_conformance runner does: memory as the first argument, the program
// on stdin, both in the protocol's hex format, r0 in hex on stdout.
func TestPluginProtocol(t *testing.T) {
	_, tests := suite(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// By default each engine runs a third of the suite, so that every
	// program goes through the protocol once; UEBPF_LONG=1 runs all of
	// it on every engine. Under the race detector a plugin process (a
	// separate one: nothing in it races with the test) takes a second to
	// start, so there a sample of the suite goes through.
	names := slices.Sorted(maps.Keys(engines))
	all := long() && !racebuild.Enabled
	if !all {
		t.Logf("each program on one engine: UEBPF_LONG=1 runs every program on all %d", len(names))
	}
	for e, name := range names {
		option := "--engine=" + name
		if name == "interpreter" {
			option = "--interpret"
		}
		t.Run(name, func(t *testing.T) {
			for i, tc := range tests {
				if !all && i%len(names) != e || racebuild.Enabled && i%(8*len(names)) != e {
					continue
				}
				insns, err := tc.Instructions()
				if err != nil {
					t.Fatal(err)
				}
				var args []string
				if len(tc.Mem) > 0 {
					args = append(args, conformance.PluginHex(tc.Mem))
				}
				cmd := exec.Command(bin, append([]string{"plugin"}, append(args, option)...)...)
				cmd.Env = append(os.Environ(), asCommandEnv+"=1")
				cmd.Stdin = strings.NewReader(conformance.PluginHex(asm.Encode(nil, insns)) + "\n")
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("%s: %v", tc.Name, err)
					continue
				}
				got, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(out)), "0x"), 16, 64)
				if err != nil || got != tc.Result {
					t.Errorf("%s: plugin printed %q, want %#x", tc.Name, out, tc.Result)
				}
			}
		})
	}
}

func TestRunAndDisasm(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "sum.s")
	os.WriteFile(src, []byte("mov %r0, 0\nadd %r2, %r1\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\njlt %r1, %r2, loop\nexit\n"), 0o644)
	raw := filepath.Join(dir, "sum.bin")
	os.WriteFile(raw, asm.Encode(nil, asm.MustAssemble("mov %r0, %r2\nexit")), 0o644)
	mem := filepath.Join(dir, "mem")
	os.WriteFile(mem, []byte{1, 2, 3}, 0o644)

	cases := []struct {
		args []string
		code int
		want string
		log  string // in stderr
	}{
		{[]string{"run", "--mem-hex", "01020304", src}, 0, "0xa\n", ""},
		{[]string{"run", "--mem-hex", "01 02", src}, 0, "0x3\n", ""},
		{[]string{"run", "--mem", mem, raw}, 0, "0x3\n", ""},
		{[]string{"run", src, "--mem", mem, "--repeat", "50"}, 0, "median", ""},
		{[]string{"disasm", src}, 0, "jlt %r1, %r2, L2\n", ""},
		{[]string{"run", "--engine", "nope", src}, 2, "", ""},
		{[]string{"run", "--mem", mem, "--mem-hex", "00", src}, 2, "", ""},
		{[]string{"run", filepath.Join(dir, "missing")}, 1, "", ""},
		{[]string{"frobnicate"}, 2, "", ""},
		// prime.bpf.o counts the primes below the u32 in its memory,
		// verified (its loops are proved to end) or not.
		{[]string{"run", "--mem-hex", "10270000", "../../internal/benchset/c/prime.bpf.o"}, 0, "0x4cd\n", ""},
		{[]string{"run", "--mem-hex", "10270000", "--no-verify", "../../internal/benchset/c/prime.bpf.o"}, 0, "0x4cd\n", ""},
		// memory_a_plus_b.bpf.o is verified with its BTF context size (8).
		{[]string{"run", "--mem-hex", "0100000002000000", "../../internal/benchset/c/memory_a_plus_b.bpf.o"}, 0, "0x3\n", ""},
		{[]string{"run", "--mem-hex", "01000000", "../../internal/benchset/c/memory_a_plus_b.bpf.o"}, 1, "", ""},
		{[]string{"run", "--mem-hex", "10270000", "--program", "nope", "../../internal/benchset/c/prime.bpf.o"}, 2, "", ""},
		// Bytecode on the JIT: verified for the memory's size and unchecked
		// when that passes, checked otherwise, and said which.
		{[]string{"run", "--engine", "jit", "--mem", mem, raw}, 0, "0x3\n", "verified for a 3-byte memory: running unchecked"},
		{[]string{"run", "--engine", "jit", "--mem", mem, "--no-verify", raw}, 0, "0x3\n", "not verified (--no-verify): running checked"},
		{[]string{"run", "--engine", "jit", "--mem-hex", "01", src}, 0, "0x1\n", "not verified for a 1-byte memory, running checked: verifier:"},
		{[]string{"run", src, "--mem", mem, "--repeat", "50", "--reset"}, 0, " per run (CPU ", ""},
		{[]string{"run", src, "--mem", mem, "--reset"}, 2, "", "--reset goes with --repeat"},
	}
	for _, tc := range cases {
		if strings.Contains(tc.log, "verified") && !jit.Supported {
			continue
		}
		code, out, stderr := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) || !strings.Contains(stderr, tc.log) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, stderr)
		}
	}
}

func TestPluginErrors(t *testing.T) {
	cases := []struct {
		stdin string
		args  []string
	}{
		{"zz\n", nil},                             // not hex
		{"95  00  00\n", nil},                     // not whole slots
		{"07  00  00  00  01  00  00  00\n", nil}, // falls off the end
		{"95  00  00  00  00  00  00  00\n", []string{"--frob"}},
	}
	for _, tc := range cases {
		if code, _, _ := runCLI(t, tc.stdin, append([]string{"plugin"}, tc.args...)...); code == 0 {
			t.Errorf("plugin %v with %q: exit 0", tc.args, tc.stdin)
		}
	}
}
