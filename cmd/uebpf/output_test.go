package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/internal/safefs/safefstest"
)

// TestOutputsRefusePlantedLinks runs the commands that write files, as
// root, into a directory user nobody prepared: a world-writable trace
// directory whose files' names nobody linked to a file only root may
// touch, and output paths nobody linked to it in a sticky directory (as
// /tmp). Each must fail and leave the file alone.
func TestOutputsRefusePlantedLinks(t *testing.T) {
	safefstest.Need(t)
	sock := serve(t)
	src := filepath.Join(t.TempDir(), "prog.s")
	if err := os.WriteFile(src, []byte("mov %r0, 1\nexit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		perm  fs.FileMode // of the shared directory
		links []string    // in it, to the secret, made by nobody
		args  func(shared string) []string
		want  string
	}{
		{
			name:  "trace record --output",
			perm:  0o777,
			links: []string{".metadata.tmp", "metadata", "stream_0"},
			args: func(d string) []string {
				return []string{"trace", "record", "--socket", sock, "--output", d, "--duration", "100ms", "clitest:event", "--filter", "code == 1"}
			},
			want: "is writable by others (mode 0777)",
		},
		{
			name:  "tracepoint header -o",
			perm:  0o777 | fs.ModeSticky,
			links: []string{"event.h"},
			args: func(d string) []string {
				return []string{"tracepoint", "header", "--name", "app:event", "--fields", "code:u32", "-o", d + "/event.h"}
			},
			want: "event.h: is a symbolic link, not written through",
		},
		{
			name:  "asm -o",
			perm:  0o777 | fs.ModeSticky,
			links: []string{"prog.bin"},
			args:  func(d string) []string { return []string{"asm", "-o", d + "/prog.bin", src} },
			want:  "prog.bin: is a symbolic link, not written through",
		},
		{
			name:  "asm beside a shared source",
			perm:  0o777 | fs.ModeSticky,
			links: []string{"prog.bin"},
			args: func(d string) []string {
				shared := d + "/prog.s"
				if err := os.WriteFile(shared, []byte("exit\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"asm", shared}
			},
			want: "prog.bin: is a symbolic link, not written through",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secret, content := safefstest.Secret(t)
			shared := safefstest.Shared(t, tt.perm)
			for _, l := range tt.links {
				safefstest.Run(t, "ln", "-s", secret, filepath.Join(shared, l))
			}
			code, stdout, stderr := runCLI(t, "", tt.args(shared)...)
			safefstest.Unchanged(t, secret, content)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want 1 with %q:\n%s%s", code, tt.want, stdout, stderr)
			}
			for _, l := range tt.links {
				if target, err := os.Readlink(filepath.Join(shared, l)); err != nil || target != secret {
					t.Errorf("nobody's link %s is now %q, %v", l, target, err)
				}
			}
		})
	}
}

// TestOutputsInSharedDirs writes the same outputs into a sticky
// directory where no one planted anything: a new trace directory in it
// is made closed to others, the header goes beside it, and the sticky
// directory itself is no trace directory.
func TestOutputsInSharedDirs(t *testing.T) {
	sock := serve(t)
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(shared, "trace")
	if code, _, stderr := runCLI(t, "", "trace", "record", "--socket", sock, "--output", trace, "--duration", "100ms", "clitest:event", "--filter", "code == 1"); code != 0 {
		t.Fatalf("trace record: exit %d\n%s", code, stderr)
	}
	fi, err := os.Stat(trace)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("%s: mode %v, writable by others", trace, fi.Mode())
	}
	for _, name := range []string{"metadata", "stream_0"} {
		if fi, err := os.Lstat(filepath.Join(trace, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v", name, err)
		}
	}
	out := filepath.Join(shared, "event.h")
	if code, _, stderr := runCLI(t, "", "tracepoint", "header", "--name", "app:event", "--fields", "code:u32", "-o", out); code != 0 {
		t.Fatalf("tracepoint header: exit %d\n%s", code, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "code") {
		t.Errorf("%s: %q, %v", out, b, err)
	}
	if code, _, stderr := runCLI(t, "", "trace", "record", "--socket", sock, "--output", shared, "--duration", "100ms", "clitest:event", "--filter", "code == 1"); code != 1 || !strings.Contains(stderr, "is writable by others (mode 1777)") {
		t.Errorf("trace record into the sticky directory itself: exit %d\n%s", code, stderr)
	}
}
