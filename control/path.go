package control

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RootDir is where the sockets of processes running as root go.
const RootDir = "/run/uebpf"

// Dir returns the directory of the caller's sockets: /run/uebpf for root,
// else $XDG_RUNTIME_DIR/uebpf, else uebpf-<uid> in the temporary
// directory.
func Dir() string {
	if os.Getuid() == 0 {
		return rootDir
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "uebpf")
	}
	return filepath.Join(os.TempDir(), "uebpf-"+strconv.Itoa(os.Getuid()))
}

// DefaultPath is the socket path of process pid in Dir: "<pid>.sock".
func DefaultPath(pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("pid %d", pid)
	}
	return filepath.Join(Dir(), strconv.Itoa(pid)+".sock"), nil
}

// prepareDir creates dir with mode 0700. A directory we create, or the
// default one, must be ours and closed to others: a socket in a directory
// another user controls could be swapped.
func prepareDir(dir string, isDefault bool) error {
	err := os.Mkdir(dir, 0o700)
	created := err == nil
	if err != nil && !errors.Is(err, fs.ErrExist) {
		if !isDefault {
			return fmt.Errorf("socket directory: %w", err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		created = true
	}
	if !created && !isDefault {
		return nil // the caller's own directory: its business
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory", dir)
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("socket directory %s belongs to uid %d, not %d", dir, uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
	}
	return nil
}

// removeStale removes a socket file at path that no process serves any
// more (its process died without removing it: connecting is refused). A
// socket someone answers on is left alone: an error that says who.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		defer c.Close()
		peer, err := peerCred(c.(*net.UnixConn))
		switch {
		case err != nil:
			return fmt.Errorf("%s is served by a live process", path)
		case peer.pid == os.Getpid():
			return fmt.Errorf("%s is served by this process already", path)
		}
		return fmt.Errorf("%s is served by a live process (pid %d, uid %d)", path, peer.pid, peer.uid)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		// A full backlog or a permission: someone may be serving it.
		return fmt.Errorf("%s: cannot tell whether a process serves it: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the stale socket: %w", err)
	}
	return nil
}

// sweep removes the sockets in dir of processes that are gone, which
// crashed before removing theirs: the default directory would otherwise
// collect one per crash. A socket that still answers (a process in
// another pid namespace, say) is left alone.
func sweep(dir string) (removed []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".sock")
		pid, err := strconv.Atoi(name)
		if !ok || err != nil || pid <= 0 || e.Type() != fs.ModeSocket || processAlive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if removeStale(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
