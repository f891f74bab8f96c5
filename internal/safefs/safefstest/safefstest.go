package safefstest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Nobody is the uid (and gid) the helpers act as.
const Nobody = 65534

// Need skips t unless it can act as another user: as root, with setpriv.
func Need(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as user nobody needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("acting as user nobody needs setpriv (util-linux)")
	}
}

// Run runs a command as user nobody, failing t with its output if it
// fails.
func Run(t testing.TB, name string, args ...string) {
	t.Helper()
	args = append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", name}, args...)
	if out, err := exec.Command("setpriv", args...).CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %s %q: %v\n%s", name, args[4:], err, out)
	}
}

// Shared returns a new directory with mode perm (0o777, or
// 0o777|fs.ModeSticky as /tmp has) that user nobody can reach, removed
// when t ends.
func Shared(t testing.TB, perm fs.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "safefs-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-x", dir).Run(); err != nil {
		t.Fatalf("user nobody cannot reach %s: set TMPDIR to a directory others may search", dir)
	}
	return dir
}

// Secret makes a file only root may read or write, in a directory of its
// own, and returns its path and content.
func Secret(t testing.TB) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	content := []byte("root's own secret\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, content
}

// Unchanged fails t unless the file at path is still a regular file with
// mode 0600 holding content.
func Unchanged(t testing.TB, path string, content []byte) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || !bytes.Equal(got, content) {
		t.Fatalf("%s was changed: mode %v, content %.40q", path, fi.Mode(), got)
	}
}
