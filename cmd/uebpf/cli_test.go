package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
)

const (
	filterObj = "../../examples/filter/filter.bpf.o"
	primeObj  = "../../internal/benchset/c/prime.bpf.o"
)

// TestErrors: each mistake gets exit status 2 (command line) or 1 (the
// run), one message that names what is wrong, and no panic.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	obj, err := os.ReadFile(filterObj)
	if err != nil {
		t.Fatal(err)
	}
	trunc := write("trunc.o", obj[:300])
	short := write("short.o", obj[:3])
	empty := write("empty.o", nil)
	prog := write("p.s", []byte("mov %r0, 1\nexit\n"))
	bad := write("bad.s", []byte("mov %r0, 1\nfrob\n"))

	cases := []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"run", trunc}, 1, "uebpf: " + trunc + ": the ELF object is truncated (300 bytes)"},
		{[]string{"disasm", trunc}, 1, trunc + ": the ELF object is truncated"},
		{[]string{"verify", trunc}, 1, trunc + ": the ELF object is truncated"},
		{[]string{"run", short}, 1, "truncated (3 bytes)"},
		{[]string{"run", empty}, 1, empty + ": empty file"},
		{[]string{"disasm", empty}, 1, empty + ": empty file"},
		{[]string{"asm", empty}, 1, empty + ": empty file"},
		{[]string{"run", "--mem-hex", "zz", prog}, 2, `uebpf run: --mem-hex: "zz" is not a hex byte`},
		{[]string{"run", "--mem-hex", "012", prog}, 2, "--mem-hex: \"012\": an odd number of hex digits"},
		{[]string{"run", "--repeat", "-1", prog}, 2, "--repeat -1: want a count ≥ 0"},
		{[]string{"run", "--repeat", "x", prog}, 2, `invalid value "x" for flag -repeat`},
		{[]string{"run", "--frob", prog}, 2, "uebpf run: flag provided but not defined: -frob\nRun 'uebpf help run' for usage.\n"},
		{[]string{"run"}, 2, "run takes one program"},
		{[]string{"run", "--engine", "nope", prog}, 2, `unknown engine "nope"`},
		{[]string{"run", "--engine", "jit-unchecked", filterObj}, 2, "for an ELF object"},
		{[]string{"run", "--program", "x", prog}, 2, "--program needs an ELF object"},
		{[]string{"run", "--program", "nope", filterObj}, 2, `no program "nope" (have count_slow)`},
		{[]string{"run", filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{"run", bad}, 1, "line 2"},
		{[]string{"verify", prog}, 2, "not an ELF object"},
		{[]string{"verify", "--context-size", "-1", filterObj}, 2, "--context-size -1"},
		{[]string{"disasm", "--program", "nope", filterObj}, 2, `no program "nope"`},
		{[]string{"asm", bad}, 2, "line 2"},
		{[]string{"asm", filterObj}, 2, "not assembler text"},
		{[]string{"asm", "-o", prog, prog}, 2, "would overwrite the source"},
		{[]string{"frobnicate"}, 2, "uebpf: unknown command \"frobnicate\"\nRun 'uebpf help' for usage.\n"},
		{[]string{"filter"}, 2, "want one of: eval, explain"},
		{[]string{"help", "frob"}, 2, "unknown command"},
		{[]string{"plugin", "--interpret", "--jit"}, 2, "exclude each other"},
		{[]string{"plugin", "zz"}, 2, "memory:"},
		{[]string{"engines", "x"}, 2, "no arguments"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.want)
			}
			if strings.Contains(stderr, "uebpf: uebpf:") || tc.args[0] == "run" && strings.Contains(stderr, "plugin hex") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
}

// TestHelp: every command has help listing each of its flags, printed
// by "uebpf help CMD" and "uebpf CMD -h" alike with exit status 0.
func TestHelp(t *testing.T) {
	_, top, _ := runCLI(t, "", "help")
	for _, c := range commands {
		if !strings.Contains(top, c.name) {
			t.Errorf("uebpf help does not list %s", c.name)
		}
		code, help, stderr := runCLI(t, "", append([]string{"help"}, strings.Fields(c.name)...)...)
		if code != 0 || !strings.HasPrefix(help, "usage: uebpf "+c.name) {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", c.name, code, help, stderr)
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(help, "-"+f.Name+" ") && !strings.Contains(help, "-"+f.Name+"\n") {
				t.Errorf("help %s lacks --%s:\n%s", c.name, f.Name, help)
			}
		})
		for _, h := range []string{"-h", "--help"} {
			code, out, _ := runCLI(t, "", append(strings.Fields(c.name), h)...)
			if code != 0 || out != help {
				t.Errorf("%s %s: exit %d, output %q, want the help", c.name, h, code, out)
			}
		}
	}
	if code, out, _ := runCLI(t, "", "help", "filter"); code != 0 || !strings.Contains(out, "uebpf filter eval") || !strings.Contains(out, "uebpf filter explain") {
		t.Errorf("help filter: exit %d, %q", code, out)
	}
	if code, _, stderr := runCLI(t, ""); code != 2 || !strings.Contains(stderr, "Commands:") {
		t.Errorf("no arguments: exit %d, stderr %q", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version", "-version"} {
		code, out, _ := runCLI(t, "", arg)
		if code != 0 || !strings.HasPrefix(out, "uebpf ") || !strings.Contains(out, " go1.") {
			t.Errorf("%s: exit %d, %q", arg, code, out)
		}
	}
}

// TestDisasmObject: C source lines from BTF above their instructions,
// map names and helper names beside them, jump targets resolved.
func TestDisasmObject(t *testing.T) {
	code, out, stderr := runCLI(t, "", "disasm", filterObj)
	for _, want := range []string{
		"count_slow (section uebpf/tracepoint/syscall_exit):\n; filter.bpf.c:26: __u32 pid = e->pid;\n    0: ldxw %r2, [%r1]\n",
		"lddw %r1, map_by_fd(0)  # slow_calls\n",
		"call 1  # map_lookup_elem\n",
		"jeq %r0, 0, +3  # -> 19\n",
		"; filter.bpf.c:33: __sync_fetch_and_add(n, 1);\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, stderr %q, output lacks %q:\n%s", code, stderr, want, out)
		}
	}
	// Every program, or the one named.
	_, all, _ := runCLI(t, "", "disasm", "../../examples/tailcall/tailcall.bpf.o")
	code, one, _ := runCLI(t, "", "disasm", "--program", "dispatch", "../../examples/tailcall/tailcall.bpf.o")
	if code != 0 || !strings.HasPrefix(one, "dispatch (section") || !strings.Contains(all, one) || len(all) <= len(one) {
		t.Errorf("--program dispatch: exit %d:\n%s\nall:\n%s", code, one, all)
	}
}

func TestAsm(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "sum.s")
	text := "mov %r0, 0\nadd %r2, %r1\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\njlt %r1, %r2, loop\nexit\n"
	os.WriteFile(src, []byte(text), 0o644)
	want := asm.Encode(nil, asm.MustAssemble(text))
	if code, _, stderr := runCLI(t, "", "asm", src); code != 0 {
		t.Fatalf("asm: exit %d, %s", code, stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "sum.bin")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("sum.bin = %x, %v; want %x", got, err, want)
	}
	out := filepath.Join(dir, "other")
	if code, _, stderr := runCLI(t, "", "asm", "-o", out, src); code != 0 {
		t.Fatalf("asm -o: exit %d, %s", code, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Errorf("-o other = %x", got)
	}
	if code, got, _ := runCLI(t, "", "asm", "-o", "-", src); code != 0 || got != string(want) {
		t.Errorf("-o -: exit %d, %x", code, got)
	}
	// What asm writes, run runs.
	if code, r0, _ := runCLI(t, "", "run", "--mem-hex", "01020304", filepath.Join(dir, "sum.bin")); code != 0 || r0 != "0xa\n" {
		t.Errorf("run sum.bin: exit %d, %q", code, r0)
	}
}

func TestVerify(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", filterObj}, 0, "count_slow (section uebpf/tracepoint/syscall_exit): verified with a 16-byte context from BTF: "},
		{[]string{"verify", "--program", "prime", primeObj}, 0, "prime (section uebpf/bench): verified with a 4-byte context from BTF"},
		// The program reads e->latency_ns at offset 8.
		{[]string{"verify", "--context-size", "8", filterObj}, 1, "refused with a 8-byte context set by --context-size: "},
		{[]string{"verify", "--context-size", "8", filterObj}, 1, "filter.bpf.c:29"},
		{[]string{"verify", "--log", filterObj}, 0, "processed 28 insns"},
		// Kernel programs are the kernel's to verify, unless named.
		{[]string{"verify", "../../testdata/mixed.bpf.o"}, 0, "on_enter (section raw_tp/sys_enter): a kernel program, which the kernel verifies"},
		{[]string{"verify", "--program", "on_enter", "../../testdata/mixed.bpf.o"}, 0, "on_enter (section raw_tp/sys_enter): verified"},
	}
	for _, tc := range cases {
		code, out, stderr := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, stderr, tc.code, tc.want)
		}
	}
}
