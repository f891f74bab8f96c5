package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// EnvDir names the environment variable that overrides SharedDir.
const EnvDir = "UEBPF_CONFORMANCE_DIR"

// SharedDir returns the directory of the suite's .data files and whether it
// exists: $UEBPF_CONFORMANCE_DIR when set, else ../shared/conformance next
// to the module root (the nearest directory above the working directory
// holding go.mod).
func SharedDir() (string, bool) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir, isDir(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			shared := filepath.Join(filepath.Dir(dir), "shared", "conformance")
			return shared, isDir(shared)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// LoadDir parses every *.data file in dir, sorted by name. It fails if a
// file does not parse or if there are no test files at all.
func LoadDir(dir string) ([]*Test, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.data"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.data files in %s", dir)
	}
	tests := make([]*Test, 0, len(paths))
	var errs []error
	for _, p := range paths {
		t, err := ParseFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tests = append(tests, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].Name < tests[j].Name })
	return tests, nil
}
