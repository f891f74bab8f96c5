package safefs_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/uebpf/uebpf/internal/safefs"
)

// A trace directory: made (or opened) and checked once, then every file
// is made through it.
func ExampleMakeDir() {
	tmp, err := os.MkdirTemp("", "example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	d, err := safefs.MakeDir(filepath.Join(tmp, "trace"), 0o755)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	stream, err := d.Create("stream_0", 0o644)
	if err != nil {
		log.Fatal(err)
	}
	stream.WriteString("packets")
	stream.Close()
	if err := d.WriteFile("metadata", []byte("/* CTF 1.8 */"), 0o644); err != nil {
		log.Fatal(err)
	}
	ents, _ := os.ReadDir(d.Path())
	for _, e := range ents {
		fmt.Println(e.Name())
	}
	// A world-writable directory is refused.
	os.Mkdir(filepath.Join(tmp, "shared"), 0o700)
	os.Chmod(filepath.Join(tmp, "shared"), 0o777)
	_, err = safefs.MakeDir(filepath.Join(tmp, "shared"), 0o755)
	fmt.Println(err != nil)
	// Output:
	// metadata
	// stream_0
	// true
}

// A command's -o FILE.
func ExampleWriteFile() {
	tmp, err := os.MkdirTemp("", "example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	out := filepath.Join(tmp, "prog.bin")
	os.Symlink("/etc/passwd", out)
	err = safefs.WriteFile(out, []byte{0x95, 0, 0, 0, 0, 0, 0, 0}, 0o644)
	fmt.Println(err != nil)
	os.Remove(out)
	fmt.Println(safefs.WriteFile(out, []byte{0x95, 0, 0, 0, 0, 0, 0, 0}, 0o644))
	// Output:
	// true
	// <nil>
}
