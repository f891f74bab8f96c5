package safefs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// owner returns the uid that owns path (not following a link).
func owner(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another uid needs root")
	}
}

func TestMakeDir(t *testing.T) {
	tests := []struct {
		name string
		root bool // chowns to another uid
		// setup prepares base and returns the path to make and the
		// directory it should name (relative to base), "" for an error.
		setup  func(t *testing.T, base string) (path, real string)
		want   string // in the error
		unsafe bool   // the error wraps ErrUnsafe
	}{
		{name: "new with parents", setup: func(t *testing.T, base string) (string, string) {
			return base + "/a/b/c", "a/b/c"
		}},
		{name: "exists", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/d", 0o700))
			return base + "/d", "d"
		}},
		{name: "trailing slash and dots", setup: func(t *testing.T, base string) (string, string) {
			return base + "/./a//b/../c/", "a/c"
		}},
		{name: "relative", setup: func(t *testing.T, base string) (string, string) {
			t.Chdir(base)
			return "x/y", "x/y"
		}},
		{name: "writable by others", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/d", 0o700))
			must(t, os.Chmod(base+"/d", 0o777))
			return base + "/d", ""
		}, want: "is writable by others (mode 0777)", unsafe: true},
		{name: "sticky and writable by others", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/d", 0o700))
			must(t, os.Chmod(base+"/d", 0o777|fs.ModeSticky))
			return base + "/d", ""
		}, want: "is writable by others (mode 1777)", unsafe: true},
		{name: "writable by group", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/d", 0o700))
			must(t, os.Chmod(base+"/d", 0o770))
			return base + "/d", ""
		}, want: "is writable by its group (mode 0770)", unsafe: true},
		{name: "another user's", root: true, setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/d", 0o755))
			must(t, os.Chown(base+"/d", 65534, 65534))
			return base + "/d", ""
		}, want: "belongs to uid 65534, not 0 (you)", unsafe: true},
		{name: "link as the last element", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/d", 0o700))
			must(t, os.Symlink(base+"/d", base+"/l"))
			return base + "/l", ""
		}, want: "/l is a symbolic link (owned by uid", unsafe: true},
		{name: "own link among the parents", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/real", 0o700))
			must(t, os.Symlink(base+"/real", base+"/l"))
			return base + "/l/trace", "real/trace"
		}},
		{name: "own relative links among the parents", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.MkdirAll(base+"/a/real", 0o700))
			must(t, os.Symlink("a/l2", base+"/l1"))
			must(t, os.Symlink("real/../real", base+"/a/l2"))
			return base + "/l1/trace", "a/real/trace"
		}},
		{name: "another user's link among the parents", root: true, setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/real", 0o700))
			must(t, os.Symlink(base+"/real", base+"/l"))
			must(t, os.Lchown(base+"/l", 65534, 65534))
			return base + "/l/trace", ""
		}, want: "/l is a symbolic link owned by uid 65534, neither root nor 0 (you): not followed", unsafe: true},
		{name: "another user's link inside an own link's target", root: true, setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Mkdir(base+"/real", 0o700))
			must(t, os.Symlink(base+"/real", base+"/theirs"))
			must(t, os.Lchown(base+"/theirs", 65534, 65534))
			must(t, os.Symlink("theirs/x", base+"/mine"))
			return base + "/mine/trace", ""
		}, want: "/theirs is a symbolic link owned by uid 65534", unsafe: true},
		{name: "through a file", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.WriteFile(base+"/f", nil, 0o600))
			return base + "/f/trace", ""
		}, want: "not a directory"},
		{name: "a file", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.WriteFile(base+"/f", nil, 0o600))
			return base + "/f", ""
		}, want: "not a directory"},
		{name: "link loop", setup: func(t *testing.T, base string) (string, string) {
			must(t, os.Symlink("l2", base+"/l1"))
			must(t, os.Symlink("l1", base+"/l2"))
			return base + "/l1/x", ""
		}, want: "too many levels of symbolic links"},
		{name: "empty", setup: func(t *testing.T, base string) (string, string) { return "", "" }, want: "invalid argument"},
		{name: "NUL", setup: func(t *testing.T, base string) (string, string) { return base + "/a\x00b", "" }, want: "invalid argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t)
			}
			base := t.TempDir()
			path, real := tt.setup(t, base)
			before := snapshot(t, base)
			d, err := MakeDir(path, 0o777)
			if tt.want != "" {
				if err == nil {
					d.Close()
					t.Fatalf("MakeDir(%q) succeeded, want an error with %q", path, tt.want)
				}
				if !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrUnsafe) != tt.unsafe {
					t.Fatalf("MakeDir(%q): %v; want %q, ErrUnsafe %v", path, err, tt.want, tt.unsafe)
				}
				if tt.unsafe && !strings.HasPrefix(err.Error(), "directory ") {
					t.Errorf("error %q does not start with the directory", err)
				}
				if after := snapshot(t, base); tt.unsafe && !slices.Equal(before, after) {
					t.Errorf("refused, but the tree changed:\n%v\n%v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatalf("MakeDir(%q): %v", path, err)
			}
			defer d.Close()
			if d.Path() != path {
				t.Errorf("Path() = %q, want %q", d.Path(), path)
			}
			f, err := d.Create("probe", 0o600)
			must(t, err)
			must(t, f.Close())
			dir := filepath.Join(base, real)
			if _, err := os.Lstat(filepath.Join(dir, "probe")); err != nil {
				t.Fatalf("the file is not in %s: %v", dir, err)
			}
			fi, err := os.Lstat(dir)
			must(t, err)
			if !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 || owner(t, dir) != os.Geteuid() {
				t.Errorf("%s: mode %v, uid %d", dir, fi.Mode(), owner(t, dir))
			}
		})
	}
}

// snapshot lists every path under dir.
func snapshot(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		out = append(out, p)
		return nil
	})
	return out
}

// TestNames checks that Dir's methods take one path element, never a
// path out of the directory, and make nothing on a bad one.
func TestNames(t *testing.T) {
	base := t.TempDir()
	d, err := MakeDir(filepath.Join(base, "d"), 0o700)
	must(t, err)
	defer d.Close()
	for _, name := range []string{"", ".", "..", "a/b", "/abs", "../x", "x/", "a\x00b"} {
		if f, err := d.Create(name, 0o600); err == nil || !errors.Is(err, fs.ErrInvalid) {
			f.Close()
			t.Errorf("Create(%q): %v, want fs.ErrInvalid", name, err)
		}
		if err := d.WriteFile(name, []byte("x"), 0o600); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("WriteFile(%q): %v, want fs.ErrInvalid", name, err)
		}
		if s, err := d.Mkdir(name, 0o700); !errors.Is(err, fs.ErrInvalid) {
			s.Close()
			t.Errorf("Mkdir(%q): %v, want fs.ErrInvalid", name, err)
		}
	}
	if got := names(t, base); !slices.Equal(got, []string{"d"}) {
		t.Errorf("%s holds %q", base, got)
	}
	if got := names(t, d.Path()); len(got) != 0 {
		t.Errorf("%s holds %q", d.Path(), got)
	}
	for _, name := range []string{"x", ".hidden", "..x", "x..", "a b", "ünï"} {
		f, err := d.Create(name, 0o600)
		if err != nil {
			t.Errorf("Create(%q): %v", name, err)
			continue
		}
		f.Close()
	}
}

func TestCreate(t *testing.T) {
	d, err := MakeDir(filepath.Join(t.TempDir(), "d"), 0o700)
	must(t, err)
	defer d.Close()
	target := filepath.Join(t.TempDir(), "target")
	must(t, os.WriteFile(target, []byte("keep"), 0o600))
	must(t, os.Symlink(target, filepath.Join(d.Path(), "stream_0")))
	must(t, os.Symlink(filepath.Join(t.TempDir(), "absent"), filepath.Join(d.Path(), "dangling")))

	for _, name := range []string{"stream_0", "dangling"} {
		if f, err := d.Create(name, 0o644); !errors.Is(err, fs.ErrExist) {
			f.Close()
			t.Errorf("Create(%q) over a link: %v, want fs.ErrExist", name, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target now holds %q", b)
	}
	f, err := d.Create("new", 0o640)
	must(t, err)
	_, err = f.WriteString("data")
	must(t, err)
	must(t, f.Close())
	if f.Name() != filepath.Join(d.Path(), "new") {
		t.Errorf("Name() = %q", f.Name())
	}
	if _, err := d.Create("new", 0o640); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of an existing file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "data" {
		t.Errorf("the file holds %q", b)
	}
}

func TestDirWriteFile(t *testing.T) {
	d, err := MakeDir(filepath.Join(t.TempDir(), "d"), 0o700)
	must(t, err)
	defer d.Close()
	target := filepath.Join(t.TempDir(), "target")
	must(t, os.WriteFile(target, []byte("keep"), 0o600))
	at := func(name string) string { return filepath.Join(d.Path(), name) }

	// A file is made, then replaced: a new inode, so that a reader holding
	// the old one sees it whole.
	must(t, d.WriteFile("metadata", []byte("one"), 0o644))
	old, err := os.Stat(at("metadata"))
	must(t, err)
	must(t, d.WriteFile("metadata", []byte("two"), 0o644))
	now, err := os.Stat(at("metadata"))
	must(t, err)
	if b, _ := os.ReadFile(at("metadata")); string(b) != "two" || os.SameFile(old, now) || now.Mode().Perm() != 0o644 {
		t.Errorf("metadata holds %q (replaced in place: %v), mode %v", b, os.SameFile(old, now), now.Mode())
	}

	// A link at the name is replaced, not followed.
	must(t, os.Symlink(target, at("link")))
	must(t, d.WriteFile("link", []byte("new"), 0o644))
	if fi, _ := os.Lstat(at("link")); !fi.Mode().IsRegular() {
		t.Errorf("link is %v, want a regular file", fi.Mode())
	}

	// A temporary name someone guessed is not written through: another
	// one is drawn.
	planted := ".metadata.planted.tmp"
	must(t, os.Symlink(target, at(planted)))
	draws := 0
	orig := tempName
	t.Cleanup(func() { tempName = orig })
	tempName = func(name string) string {
		if draws++; draws == 1 {
			return planted
		}
		return orig(name)
	}
	must(t, d.WriteFile("metadata", []byte("three"), 0o644))
	if b, _ := os.ReadFile(at("metadata")); string(b) != "three" || draws != 2 {
		t.Errorf("metadata holds %q after %d draws", b, draws)
	}

	// Every name taken: an error, and nothing left behind.
	tempName = func(string) string { return planted }
	if err := d.WriteFile("metadata", []byte("four"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteFile with every temporary name taken: %v", err)
	}
	tempName = orig

	// A failed rename (over a directory) removes the temporary file.
	must(t, os.Mkdir(at("sub"), 0o700))
	must(t, os.WriteFile(at("sub/x"), nil, 0o600))
	if err := d.WriteFile("sub", []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), at("sub")) {
		t.Errorf("WriteFile over a directory: %v", err)
	}

	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the target of the links now holds %q", b)
	}
	if got := names(t, d.Path()); !slices.Equal(got, []string{planted, "link", "metadata", "sub"}) {
		t.Errorf("the directory holds %q", got)
	}
}

func TestMkdir(t *testing.T) {
	d, err := MakeDir(filepath.Join(t.TempDir(), "d"), 0o700)
	must(t, err)
	defer d.Close()
	sub, err := d.Mkdir("chunk-1", 0o777)
	must(t, err)
	defer sub.Close()
	if sub.Path() != filepath.Join(d.Path(), "chunk-1") {
		t.Errorf("Path() = %q", sub.Path())
	}
	must(t, sub.WriteFile("stream_0", []byte("x"), 0o644))
	if b, _ := os.ReadFile(filepath.Join(d.Path(), "chunk-1", "stream_0")); string(b) != "x" {
		t.Errorf("the file holds %q", b)
	}
	fi, err := os.Stat(sub.Path())
	must(t, err)
	if fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("mode %v: group or others may write", fi.Mode())
	}
	if _, err := d.Mkdir("chunk-1", 0o700); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir of an existing directory: %v", err)
	}
	must(t, os.Symlink(t.TempDir(), filepath.Join(d.Path(), "link")))
	if _, err := d.Mkdir("link", 0o700); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir over a link: %v", err)
	}
}

// TestRenamedAway renames the directory's parent away after MakeDir, and
// puts another directory where it was: files still go into the
// directory that was checked.
func TestRenamedAway(t *testing.T) {
	base := t.TempDir()
	d, err := MakeDir(base+"/a/trace", 0o700)
	must(t, err)
	defer d.Close()
	must(t, os.Rename(base+"/a", base+"/b"))
	must(t, os.MkdirAll(base+"/a/trace", 0o700))
	f, err := d.Create("stream_0", 0o644)
	must(t, err)
	f.Close()
	must(t, d.WriteFile("metadata", []byte("m"), 0o644))
	if got := names(t, base+"/b/trace"); !slices.Equal(got, []string{"metadata", "stream_0"}) {
		t.Errorf("the checked directory holds %q", got)
	}
	if got := names(t, base+"/a/trace"); len(got) != 0 {
		t.Errorf("the directory now at the path holds %q", got)
	}
}

func TestClosed(t *testing.T) {
	d, err := MakeDir(t.TempDir(), 0o700)
	must(t, err)
	must(t, d.Close())
	must(t, d.Close())
	if _, err := d.Create("x", 0o600); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Create after Close: %v", err)
	}
	if err := d.WriteFile("x", nil, 0o600); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("WriteFile after Close: %v", err)
	}
	if _, err := d.Mkdir("x", 0o700); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Mkdir after Close: %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name string
		root bool
		// setup prepares base and returns the path to write.
		setup  func(t *testing.T, base string) string
		want   string // in the error; "" for success
		unsafe bool
	}{
		{name: "new", setup: func(t *testing.T, base string) string { return base + "/out.bin" }},
		{name: "replace", setup: func(t *testing.T, base string) string {
			must(t, os.WriteFile(base+"/out.bin", []byte("old"), 0o600))
			return base + "/out.bin"
		}},
		{name: "relative", setup: func(t *testing.T, base string) string {
			t.Chdir(base)
			return "out.bin"
		}},
		{name: "through own link", setup: func(t *testing.T, base string) string {
			must(t, os.Mkdir(base+"/real", 0o755))
			must(t, os.Symlink("real", base+"/l"))
			return base + "/l/out.bin"
		}},
		{name: "sticky directory writable by others", setup: func(t *testing.T, base string) string {
			must(t, os.Chmod(base, 0o777|fs.ModeSticky))
			return base + "/out.bin"
		}},
		{name: "directory writable by group", setup: func(t *testing.T, base string) string {
			must(t, os.Chmod(base, 0o770))
			return base + "/out.bin"
		}},
		{name: "link at the path", setup: func(t *testing.T, base string) string {
			must(t, os.Symlink(base+"/target", base+"/out.bin"))
			return base + "/out.bin"
		}, want: "/out.bin: is a symbolic link, not written through", unsafe: true},
		{name: "directory writable by others", setup: func(t *testing.T, base string) string {
			must(t, os.Chmod(base, 0o777))
			return base + "/out.bin"
		}, want: "is writable by others and not sticky (mode 0777)", unsafe: true},
		{name: "another user's directory", root: true, setup: func(t *testing.T, base string) string {
			must(t, os.Chown(base, 65534, 65534))
			return base + "/out.bin"
		}, want: "belongs to uid 65534, neither root nor 0 (you)", unsafe: true},
		{name: "another user's file in a sticky directory", root: true, setup: func(t *testing.T, base string) string {
			must(t, os.Chmod(base, 0o777|fs.ModeSticky))
			must(t, os.WriteFile(base+"/out.bin", []byte("theirs"), 0o644))
			must(t, os.Chown(base+"/out.bin", 65534, 65534))
			return base + "/out.bin"
		}, want: "/out.bin: belongs to uid 65534, in sticky directory", unsafe: true},
		{name: "another user's link on the way", root: true, setup: func(t *testing.T, base string) string {
			must(t, os.Mkdir(base+"/real", 0o755))
			must(t, os.Symlink("real", base+"/l"))
			must(t, os.Lchown(base+"/l", 65534, 65534))
			return base + "/l/out.bin"
		}, want: "/l is a symbolic link owned by uid 65534", unsafe: true},
		{name: "a directory", setup: func(t *testing.T, base string) string {
			must(t, os.Mkdir(base+"/out.bin", 0o755))
			return base + "/out.bin"
		}, want: "/out.bin: is a directory"},
		{name: "missing directory", setup: func(t *testing.T, base string) string { return base + "/no/out.bin" }, want: "no such file"},
		{name: "trailing slash", setup: func(t *testing.T, base string) string { return base + "/out/" }, want: "not a file's path"},
		{name: "dot dot", setup: func(t *testing.T, base string) string { return base + "/.." }, want: "not a file's path"},
		{name: "root", setup: func(t *testing.T, base string) string { return "/" }, want: "not a file's path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t)
			}
			base := t.TempDir()
			path := tt.setup(t, base)
			before := snapshot(t, base)
			err := WriteFile(path, []byte("new"), 0o644)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrUnsafe) != tt.unsafe {
					t.Fatalf("WriteFile(%q): %v; want %q, ErrUnsafe %v", path, err, tt.want, tt.unsafe)
				}
				if after := snapshot(t, base); !slices.Equal(before, after) {
					t.Errorf("refused, but the tree changed:\n%v\n%v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteFile(%q): %v", path, err)
			}
			if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, []byte("new")) {
				t.Errorf("%s holds %q (%v)", path, b, err)
			}
			if fi, _ := os.Lstat(path); !fi.Mode().IsRegular() {
				t.Errorf("%s is %v", path, fi.Mode())
			}
			for _, p := range snapshot(t, base) {
				if strings.HasSuffix(p, ".tmp") {
					t.Errorf("temporary file %s left", p)
				}
			}
		})
	}
}

func TestSplitPath(t *testing.T) {
	tests := []struct {
		path, dir, name string
		ok              bool
	}{
		{"out.bin", ".", "out.bin", true},
		{"/tmp/x", "/tmp", "x", true},
		{"/x", "/", "x", true},
		{"a//b", "a", "b", true},
		{"a/../b", "a/..", "b", true},
		{"//x", "/", "x", true},
		{"", ".", "", false},
		{"dir/", "dir", "", false},
		{"/", "/", "", false},
		{"a/.", "a", ".", false},
		{"..", ".", "..", false},
		{"a\x00b", "", "", false},
	}
	for _, tt := range tests {
		dir, name, ok := splitPath(tt.path)
		if ok != tt.ok || ok && (dir != tt.dir || name != tt.name) {
			t.Errorf("splitPath(%q) = %q, %q, %v; want %q, %q, %v", tt.path, dir, name, ok, tt.dir, tt.name, tt.ok)
		}
	}
}

// TestConcurrentWriteFile has writers replace one file while a reader
// reads it: the reader sees one whole version or another, never part of
// one, and no temporary file is left.
func TestConcurrentWriteFile(t *testing.T) {
	d, err := MakeDir(filepath.Join(t.TempDir(), "d"), 0o700)
	must(t, err)
	defer d.Close()
	versions := [][]byte{bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<17)}
	must(t, d.WriteFile("metadata", versions[0], 0o644))
	done := make(chan error, 2)
	for w := range 2 {
		go func() {
			for i := range 50 {
				if err := d.WriteFile("metadata", versions[(w+i)%2], 0o644); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for finished := 0; finished < 2; {
		select {
		case err := <-done:
			must(t, err)
			finished++
		default:
			b, err := os.ReadFile(filepath.Join(d.Path(), "metadata"))
			must(t, err)
			if !bytes.Equal(b, versions[0]) && !bytes.Equal(b, versions[1]) {
				t.Fatalf("read %d bytes, not a whole version", len(b))
			}
		}
	}
	if got := names(t, d.Path()); !slices.Equal(got, []string{"metadata"}) {
		t.Errorf("the directory holds %q", got)
	}
}
