package safefs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/internal/safefs/safefstest"
)

// TestHostile has user nobody prepare a shared directory (as /tmp: world
// writable and sticky, or only world writable) against root's next write,
// and checks that root writes nowhere nobody chose, and that the file
// only root may touch stays as it was.
func TestHostile(t *testing.T) {
	safefstest.Need(t)
	secret, content := safefstest.Secret(t)
	tests := []struct {
		name  string
		perm  fs.FileMode // of the shared directory
		plant [][]string  // commands nobody runs in it ("$D" is its path, "$S" the secret's)
		open  string      // a directory root made in it first, mode 0777
		write func(shared string) error
		want  string
	}{
		{
			name:  "nobody's trace directory",
			perm:  0o777 | fs.ModeSticky,
			plant: [][]string{{"mkdir", "-m", "755", "$D/trace"}},
			write: makeDir("trace"),
			want:  "trace belongs to uid 65534, not 0 (you)",
		},
		{
			name: "root's world-writable trace directory, links planted",
			perm: 0o777 | fs.ModeSticky,
			open: "trace",
			plant: [][]string{
				{"ln", "-s", "$S", "$D/trace/.metadata.tmp"},
				{"ln", "-s", "$S", "$D/trace/metadata"},
				{"ln", "-s", "$S", "$D/trace/stream_0"},
			},
			write: makeDir("trace"),
			want:  "trace is writable by others (mode 0777)",
		},
		{
			name:  "link to the secret's directory as a parent",
			perm:  0o777 | fs.ModeSticky,
			plant: [][]string{{"ln", "-s", "$SD", "$D/link"}},
			write: makeDir("link/trace"),
			want:  "link is a symbolic link owned by uid 65534, neither root nor 0 (you): not followed",
		},
		{
			name:  "link as the trace directory",
			perm:  0o777 | fs.ModeSticky,
			plant: [][]string{{"ln", "-s", "$SD", "$D/trace"}},
			write: makeDir("trace"),
			want:  "trace is a symbolic link (owned by uid 65534), not a directory",
		},
		{
			name:  "link as the output file",
			perm:  0o777 | fs.ModeSticky,
			plant: [][]string{{"ln", "-s", "$S", "$D/out.h"}},
			write: writeFile("out.h"),
			want:  "out.h: is a symbolic link, not written through",
		},
		{
			name:  "nobody's output file in a sticky directory",
			perm:  0o777 | fs.ModeSticky,
			plant: [][]string{{"touch", "$D/out.h"}},
			write: writeFile("out.h"),
			want:  "out.h: belongs to uid 65534, in sticky directory",
		},
		{
			name:  "output in a directory anyone may rearrange",
			perm:  0o777,
			write: writeFile("out.h"),
			want:  "is writable by others and not sticky (mode 0777)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shared := safefstest.Shared(t, tt.perm)
			if tt.open != "" {
				if err := os.Mkdir(filepath.Join(shared, tt.open), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(shared, tt.open), 0o777); err != nil {
					t.Fatal(err)
				}
			}
			r := strings.NewReplacer("$SD", filepath.Dir(secret), "$S", secret, "$D", shared)
			for _, cmd := range tt.plant {
				args := make([]string, len(cmd)-1)
				for i, a := range cmd[1:] {
					args[i] = r.Replace(a)
				}
				safefstest.Run(t, cmd[0], args...)
			}
			before := tree(t, shared)
			err := tt.write(shared)
			if err == nil || !errors.Is(err, safefs.ErrUnsafe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a refusal with %q", err, tt.want)
			}
			safefstest.Unchanged(t, secret, content)
			if ents, _ := os.ReadDir(filepath.Dir(secret)); len(ents) != 1 {
				t.Errorf("the secret's directory now holds %d entries", len(ents))
			}
			if after := tree(t, shared); !slices.Equal(before, after) {
				t.Errorf("the shared directory changed:\n%s\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
		})
	}
}

// TestHostileClosed checks that a directory MakeDir made in a shared one
// is closed to nobody: the links of the hostile tests cannot be planted.
func TestHostileClosed(t *testing.T) {
	safefstest.Need(t)
	shared := safefstest.Shared(t, 0o777|fs.ModeSticky)
	d, err := safefs.MakeDir(shared+"/trace", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	safefstest.Run(t, "sh", "-c", `! ln -s /etc/shadow "$0"/metadata 2>/dev/null && ! mv "$0" "$0".gone 2>/dev/null`, d.Path())
	if err := d.WriteFile("metadata", []byte("m"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree describes every file under dir: path, inode, size and mode.
func tree(t *testing.T, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d %v", p, fi.Sys().(*syscall.Stat_t).Ino, fi.Size(), fi.Mode()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func makeDir(name string) func(string) error {
	return func(shared string) error {
		d, err := safefs.MakeDir(filepath.Join(shared, name), 0o755)
		if err == nil {
			d.Close()
		}
		return err
	}
}

func writeFile(name string) func(string) error {
	return func(shared string) error {
		return safefs.WriteFile(filepath.Join(shared, name), []byte("#pragma once\n"), 0o644)
	}
}
