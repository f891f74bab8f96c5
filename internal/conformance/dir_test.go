package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSharedDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	if got, ok := SharedDir(); got != dir || !ok {
		t.Errorf("SharedDir() = %q, %v; want %q, true", got, ok, dir)
	}
	missing := filepath.Join(dir, "missing")
	t.Setenv(EnvDir, missing)
	if got, ok := SharedDir(); got != missing || ok {
		t.Errorf("SharedDir() = %q, %v; want %q, false", got, ok, missing)
	}
}

func TestSharedDirNextToModule(t *testing.T) {
	t.Setenv(EnvDir, "")
	root := t.TempDir()
	module := filepath.Join(root, "main")
	shared := filepath.Join(root, "shared", "conformance")
	deep := filepath.Join(module, "a", "b")
	for _, d := range []string{shared, deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(module, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if got, ok := SharedDir(); got != shared || !ok {
		t.Errorf("SharedDir() = %q, %v; want %q, true", got, ok, shared)
	}
}

func TestLoadDirSortsAndFails(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"b.data":     "-- asm\nexit\n-- result\n0x0\n",
		"a.data":     "-- asm\nexit\n-- result\n0x1\n",
		"notes.txt":  "ignored",
		"c-two.data": "-- asm\nexit\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tc := range tests {
		names = append(names, tc.Name)
	}
	if want := []string{"a", "b", "c-two"}; !slices.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}

	if err := os.WriteFile(filepath.Join(dir, "bad.data"), []byte("-- nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "bad.data") {
		t.Errorf("LoadDir error = %v, want one naming bad.data", err)
	}
	if _, err := LoadDir(t.TempDir()); err == nil {
		t.Error("LoadDir of an empty directory succeeded")
	}
}

func TestLoadSharedSuite(t *testing.T) {
	dir, ok := SharedDir()
	if !ok {
		t.Skipf("conformance suite not found (looked at %q; set %s)", dir, EnvDir)
	}
	tests, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 313 {
		t.Errorf("%d tests, want 313", len(tests))
	}
	byName := map[string]*Test{}
	for _, tc := range tests {
		byName[tc.Name] = tc
		if !tc.HasResult {
			t.Errorf("%s: no result", tc.Name)
		}
		if _, err := tc.Instructions(); err != nil {
			t.Errorf("%s: %v", tc.Name, err)
		}
	}
	if tc := byName["lddw"]; tc == nil || len(tc.Raw) != 24 {
		t.Errorf("lddw: want a raw section of 3 slots")
	}
	if tc := byName["subnet"]; tc == nil || len(tc.Mem) != 74 || tc.Result != 1 {
		t.Errorf("subnet: want 74 bytes of memory and result 1")
	}
	if tc := byName["lock_xor"]; tc == nil || !tc.HasResult || tc.Result != 0 {
		t.Errorf("lock_xor: want result 0")
	}
}
