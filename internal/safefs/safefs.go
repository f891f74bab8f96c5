package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
)

// ErrUnsafe is wrapped by every refusal to write through a path another
// user could redirect: a directory that is not the caller's or that others
// may write, a symbolic link at the file's path, a link on the way owned
// by another user.
var ErrUnsafe = errors.New("safefs: unsafe path")

// unsafeError is a refusal: its text says why, and it wraps ErrUnsafe.
type unsafeError string

func (e unsafeError) Error() string { return string(e) }
func (e unsafeError) Unwrap() error { return ErrUnsafe }

func unsafef(format string, args ...any) error { return unsafeError(fmt.Sprintf(format, args...)) }

// errBadName is the error of a name that is not one path element.
var errBadName = fmt.Errorf("%w: want a file name in the directory, with no '/' or NUL, not '.' or '..'", fs.ErrInvalid)

// Dir is a directory held open by descriptor: every file is made relative
// to it, so it stays the directory MakeDir or Mkdir checked whatever
// happens to its path afterwards. A Dir is safe for concurrent use.
type Dir struct {
	path   string
	h      handle
	closed atomic.Bool
}

// MakeDir creates the directory path with mode perm, and its missing
// parents, as os.MkdirAll does, or opens it if it exists. It then checks
// the directory through its descriptor: a directory, not a symbolic link
// (as the last element of path), owned by the caller's effective uid, and
// writable by neither group nor others. Directories it creates never are:
// the write bits of group and others are dropped from perm.
//
// Symbolic links among the parents are followed only if root or the
// caller owns them. A refusal wraps ErrUnsafe; its text starts
// "directory PATH".
func MakeDir(path string, perm fs.FileMode) (*Dir, error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return nil, fmt.Errorf("directory %q: %w", path, fs.ErrInvalid)
	}
	return makeDir(path, perm.Perm()&^0o022)
}

// Path returns the path the directory was opened by.
func (d *Dir) Path() string { return d.path }

// Close closes the directory's descriptor. Files made in it stay open.
func (d *Dir) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	return d.close()
}

// Create makes the new file name (one path element: no '/', not '.' or
// '..') in d, opened for reading and writing (a file to map shared needs
// both): O_CREAT|O_EXCL|O_NOFOLLOW, so that it
// fails on any existing entry, a planted link included.
func (d *Dir) Create(name string, perm fs.FileMode) (*os.File, error) {
	if !validName(name) {
		return nil, &fs.PathError{Op: "create", Path: d.join(name), Err: errBadName}
	}
	var f *os.File
	err := d.with(func(o dirOps) error {
		var err error
		f, err = o.create(name, perm.Perm())
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: d.join(name), Err: err}
	}
	return f, nil
}

// WriteFile replaces the file name in d with one holding data, or makes
// it: the data goes to a new file with a random name starting with '.'
// (made as Create does), which is then renamed over name in the same
// directory. A reader sees the old file or the new one, never half of
// one; a link at name is replaced, not followed. On failure the
// temporary file is removed. Nothing is synced to disk.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if !validName(name) {
		return &fs.PathError{Op: "write", Path: d.join(name), Err: errBadName}
	}
	err := d.with(func(o dirOps) error { return replace(o, name, data, perm.Perm()) })
	if err != nil {
		return &fs.PathError{Op: "write", Path: d.join(name), Err: err}
	}
	return nil
}

// Mkdir makes the subdirectory name (one path element) in d with mode
// perm less the write bits of group and others, and returns it open and
// checked as MakeDir does. It fails if name exists.
func (d *Dir) Mkdir(name string, perm fs.FileMode) (*Dir, error) {
	if !validName(name) {
		return nil, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: errBadName}
	}
	var sub *Dir
	err := d.with(func(o dirOps) error {
		var err error
		sub, err = o.mkdir(name, perm.Perm()&^0o022)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	sub.path = d.join(name)
	if err := checkOwnDir(sub.path, sub.stat); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// WriteFile writes data to the file path, a single output a user names
// (a command's -o FILE), replacing it if it exists with a new file of
// mode perm. The directory it goes
// in must exist and be owned by root or the caller, and must not be
// writable by others unless it is sticky (as /tmp, where others cannot
// replace or remove what is not theirs); symbolic links on the way are
// followed only if root or the caller owns them. A symbolic link at path
// is refused, and so is another user's file in a sticky directory. The
// data goes to a temporary file beside path, renamed over it, as
// Dir.WriteFile does. A refusal wraps ErrUnsafe.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	parent, base, ok := splitPath(path)
	if !ok {
		return &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w: not a file's path", fs.ErrInvalid)}
	}
	err := withParent(parent, func(o dirOps, dir fileInfo) error {
		if err := checkParent(parent, dir); err != nil {
			return err
		}
		fi, err := o.lstat(base)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		case fi.mode&fs.ModeSymlink != 0:
			return unsafef("is a symbolic link, not written through (remove it, or name its target)")
		case fi.mode.IsDir():
			return errors.New("is a directory")
		case dir.mode&fs.ModeSticky != 0 && fi.uid != os.Geteuid():
			return unsafef("belongs to uid %d, in sticky directory %s: not replaced", fi.uid, parent)
		}
		return replace(o, base, data, perm.Perm())
	})
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// fileInfo is what the checks need of a file, read without following a
// link: its owner, and its type and permission bits (sticky included).
type fileInfo struct {
	uid  int
	mode fs.FileMode
}

// dirOps are the operations on an open directory, relative to it.
type dirOps interface {
	// lstat describes name without following a link.
	lstat(name string) (fileInfo, error)
	// create makes a new file, following no link (O_CREAT|O_EXCL|O_NOFOLLOW).
	create(name string, perm fs.FileMode) (*os.File, error)
	rename(from, to string) error
	remove(name string) error
	// mkdir makes the subdirectory name and returns it open.
	mkdir(name string, perm fs.FileMode) (*Dir, error)
}

// tempName returns the name of a temporary file for name: hidden (readers
// of a trace take every other file for a stream), random (so that no one
// can plant it), and short enough for the file system.
var tempName = func(name string) string {
	var r [8]byte
	rand.Read(r[:])
	return "." + name[:min(len(name), 200)] + "." + hex.EncodeToString(r[:]) + ".tmp"
}

// replace writes data to a new temporary file in o and renames it over
// name; the temporary file is removed on failure.
func replace(o dirOps, name string, data []byte, perm fs.FileMode) error {
	var (
		f   *os.File
		tmp string
		err error
	)
	for range 10 { // a name taken is someone's guess, or a collision: draw again
		tmp = tempName(name)
		if f, err = o.create(tmp, perm); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.rename(tmp, name)
	}
	if err != nil {
		o.remove(tmp)
		return err
	}
	return nil
}

// checkOwnDir checks the directory MakeDir and Mkdir hand out: the
// caller's, and writable by no one else, who could otherwise rearrange
// its files.
func checkOwnDir(path string, stat func() (fileInfo, error)) error {
	fi, err := stat()
	if err != nil {
		return fmt.Errorf("directory %s: %w", path, err)
	}
	euid := os.Geteuid()
	switch {
	case !fi.mode.IsDir():
		return fmt.Errorf("directory %s: not a directory", path)
	case fi.uid != euid:
		return unsafef("directory %s belongs to uid %d, not %d (you): use a directory of your own", path, fi.uid, euid)
	case fi.mode&0o002 != 0:
		return unsafef("directory %s is writable by others (mode %s): chmod go-w it, or use another", path, octal(fi.mode))
	case fi.mode&0o020 != 0:
		return unsafef("directory %s is writable by its group (mode %s): chmod g-w it, or use another", path, octal(fi.mode))
	}
	return nil
}

// checkParent checks the directory of WriteFile's file: root's or the
// caller's, and writable by others only if sticky, so that no other user
// can replace the file once written. Group write is allowed: the file is
// renamed into place, so a member of the group cannot redirect the write.
func checkParent(path string, fi fileInfo) error {
	euid := os.Geteuid()
	switch {
	case fi.uid != euid && fi.uid != 0:
		return unsafef("directory %s belongs to uid %d, neither root nor %d (you)", path, fi.uid, euid)
	case fi.mode&0o002 != 0 && fi.mode&fs.ModeSticky == 0:
		return unsafef("directory %s is writable by others and not sticky (mode %s): chmod o-w or +t it, or write elsewhere", path, octal(fi.mode))
	}
	return nil
}

// checkLink checks a symbolic link about to be followed at path: root's
// or the caller's.
func checkLink(path string, uid int) error {
	if euid := os.Geteuid(); uid != 0 && uid != euid {
		return unsafef("%s is a symbolic link owned by uid %d, neither root nor %d (you): not followed", path, uid, euid)
	}
	return nil
}

// octal formats permission bits as chmod takes them: 0755, 1777.
func octal(m fs.FileMode) string {
	n := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		n |= 0o1000
	}
	return fmt.Sprintf("%04o", n)
}

// validName reports whether name is one path element of a directory.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// splitPath splits the path of a file into its directory and its name,
// which must be a valid name: "out.bin" is in ".", "/tmp/x" in "/tmp".
func splitPath(path string) (dir, name string, ok bool) {
	if strings.IndexByte(path, 0) >= 0 {
		return "", "", false
	}
	i := strings.LastIndexByte(path, '/')
	dir, name = path[:i+1], path[i+1:]
	if dir == "" {
		dir = "."
	} else if dir = strings.TrimRight(dir, "/"); dir == "" {
		dir = "/"
	}
	return dir, name, validName(name)
}

// components splits path into the elements a walk opens in turn, "."
// and empty ones left out.
func components(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// stat describes d itself, through its descriptor.
func (d *Dir) stat() (fileInfo, error) {
	var fi fileInfo
	err := d.with(func(o dirOps) error {
		var err error
		fi, err = o.lstat(".")
		return err
	})
	return fi, err
}

// join names the file name in d, for messages: not cleaned, so that a
// bad name shows as given.
func (d *Dir) join(name string) string { return strings.TrimSuffix(d.path, "/") + "/" + name }
