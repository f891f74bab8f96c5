package ctf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/internal/safefs/safefstest"
	"github.com/uebpf/uebpf/tracepoint"
)

// TestCreatePlantedLinks is the attack on a trace directory others may
// write: user nobody links the names of the trace's files (the metadata,
// the temporary name it once had, the stream) to a file only root may
// touch. Create must refuse the directory and leave the file alone.
func TestCreatePlantedLinks(t *testing.T) {
	safefstest.Need(t)
	secret, content := safefstest.Secret(t)
	tests := []struct {
		name   string
		perm   fs.FileMode // of the trace directory root made
		nobody bool        // nobody made it instead, mode 0755
		plant  []string    // the links nobody plants; all three unless set
		want   string
	}{
		// The reported attack: only the old temporary name planted.
		{name: "world-writable, the metadata's temporary name", perm: 0o777, plant: []string{".metadata.tmp"}, want: "is writable by others (mode 0777)"},
		{name: "world-writable", perm: 0o777, want: "is writable by others (mode 0777)"},
		{name: "world-writable and sticky", perm: 0o777 | fs.ModeSticky, want: "is writable by others (mode 1777)"},
		{name: "writable by nobody's group", perm: 0o775, want: "is writable by its group (mode 0775)"},
		{name: "nobody's", nobody: true, want: "belongs to uid 65534, not 0 (you)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(safefstest.Shared(t, 0o777|fs.ModeSticky), "trace")
			if tt.nobody {
				safefstest.Run(t, "mkdir", "-m", "755", dir)
			} else {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.perm); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(dir, 0, safefstest.Nobody); err != nil {
					t.Fatal(err)
				}
			}
			planted := tt.plant
			if planted == nil {
				planted = []string{".metadata.tmp", MetadataFile, StreamFile}
			}
			for _, name := range planted {
				safefstest.Run(t, "ln", "-s", secret, filepath.Join(dir, name))
			}
			w, err := Create(dir)
			if err == nil {
				w.Close()
			}
			safefstest.Unchanged(t, secret, content)
			if err == nil || !errors.Is(err, safefs.ErrUnsafe) || !strings.HasPrefix(err.Error(), "ctf: trace directory "+dir+" ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Create(%s): %v; want a refusal with %q", dir, err, tt.want)
			}
			for _, name := range planted {
				if target, err := os.Readlink(filepath.Join(dir, name)); err != nil || target != secret {
					t.Errorf("%s: %q, %v; want nobody's link", name, target, err)
				}
			}
		})
	}
}

// TestCreateKeepsItsDirectory renames the trace's parent away while the
// trace is written and puts another directory in its place: the writer's
// files, metadata rewrites included, stay in the directory Create made.
func TestCreateKeepsItsDirectory(t *testing.T) {
	base := t.TempDir()
	w, err := Create(filepath.Join(base, "a", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(base, "a"), filepath.Join(base, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "a", "trace"), 0o755); err != nil {
		t.Fatal(err)
	}
	info, err := tracepoint.ParseSpec("moved:event", "code:u32")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvent(&tracepoint.Event{Info: &info, TimestampNs: 1, Body: make([]byte, 8+4), Payload: make([]byte, 4)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(base, "b", "trace", MetadataFile))
	if err != nil || !strings.Contains(string(meta), `"moved:event"`) {
		t.Errorf("the trace's metadata does not declare the event written after the move (%v)", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(base, "a", "trace")); len(ents) != 0 {
		t.Errorf("the directory now at the trace's path holds %d files", len(ents))
	}
	if ents, _ := os.ReadDir(filepath.Join(base, "b", "trace")); len(ents) != 2 {
		t.Errorf("the trace holds %d files, want the stream and the metadata", len(ents))
	}
}
