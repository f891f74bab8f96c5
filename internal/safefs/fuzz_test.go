package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// FuzzName checks that a name Dir takes is one entry of the directory,
// whatever its bytes: Create and WriteFile make exactly that entry or
// nothing, and refuse every name that is not one path element.
func FuzzName(f *testing.F) {
	for _, s := range []string{"metadata", "stream_0", ".", "..", "../x", "a/b", "/", "", "x\x00", ".metadata.tmp", strings.Repeat("n", 300)} {
		f.Add(s)
	}
	dir := f.TempDir()
	d, err := MakeDir(dir, 0o700)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { d.Close() })
	outside := filepath.Dir(dir)
	f.Fuzz(func(t *testing.T, name string) {
		one := name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
		before, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		for _, write := range []func() error{
			func() error {
				f, err := d.Create(name, 0o600)
				if err == nil {
					f.Close()
				}
				return err
			},
			func() error { return d.WriteFile(name, []byte(name), 0o600) },
		} {
			err := write()
			switch {
			case !one && !errors.Is(err, fs.ErrInvalid):
				t.Fatalf("%q is not one path element, yet: %v", name, err)
			case one && err != nil && !errors.Is(err, syscall.ENAMETOOLONG):
				t.Fatalf("%q: %v", name, err)
			}
			ents, err2 := os.ReadDir(dir)
			if err2 != nil {
				t.Fatal(err2)
			}
			if err != nil && len(ents) != 0 || err == nil && (len(ents) != 1 || ents[0].Name() != name || !ents[0].Type().IsRegular()) {
				t.Fatalf("%q (%v) made %v", name, err, ents)
			}
			if err == nil {
				os.Remove(dir + "/" + name)
			}
		}
		if after, _ := os.ReadDir(outside); len(after) != len(before) {
			t.Fatalf("%q: the directory's parent changed", name)
		}
	})
}

// FuzzSplitPath checks that WriteFile's path is split into a directory
// and one path element that name the same file.
func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"out.bin", "/tmp/x", "/", "a//b/", "a/..", "//x", "", "a\x00/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		dir, name, ok := splitPath(path)
		if !ok {
			last := path[strings.LastIndexByte(path, '/')+1:]
			if validName(last) && !strings.Contains(path, "\x00") {
				t.Fatalf("splitPath(%q) refused the file %q", path, last)
			}
			return
		}
		if !validName(name) || !strings.HasSuffix(path, name) {
			t.Fatalf("splitPath(%q): name %q", path, name)
		}
		if filepath.Clean(dir+"/"+name) != filepath.Clean(path) {
			t.Fatalf("splitPath(%q) = %q, %q: another file", path, dir, name)
		}
	})
}
