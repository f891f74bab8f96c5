//go:build unix && !linux

package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// handle is a Dir's os.Root: its files are made relative to the
// directory's descriptor, and links out of it are not followed.
type handle = *os.Root

func makeDir(path string, perm fs.FileMode) (*Dir, error) {
	if err := checkWalk(path, true, false, perm); err != nil {
		return nil, &fs.PathError{Op: "directory", Path: path, Err: err}
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, &fs.PathError{Op: "directory", Path: path, Err: err}
	}
	d := &Dir{path: path, h: r}
	// What counts is the directory opened, checked through r; a link
	// swapped in at path since the walk is caught here.
	lfi, lerr := os.Lstat(path)
	rfi, rerr := r.Stat(".")
	if err := errors.Join(lerr, rerr); err != nil || lfi.Mode()&fs.ModeSymlink != 0 || !os.SameFile(lfi, rfi) {
		r.Close()
		return nil, unsafef("directory %s changed while it was opened", path)
	}
	if err := checkOwnDir(path, d.stat); err != nil {
		r.Close()
		return nil, err
	}
	return d, nil
}

func (d *Dir) with(fn func(dirOps) error) error {
	if d.closed.Load() {
		return fs.ErrClosed
	}
	return fn(rootDir{d.h, d.path})
}

func (d *Dir) close() error { return d.h.Close() }

func withParent(path string, fn func(dirOps, fileInfo) error) error {
	if err := checkWalk(path, false, true, 0); err != nil {
		return err
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return err
	}
	defer r.Close()
	o := rootDir{r, path}
	fi, err := o.lstat(".")
	if err != nil {
		return err
	}
	return fn(o, fi)
}

type rootDir struct {
	r    *os.Root
	path string
}

func (o rootDir) lstat(name string) (fileInfo, error) {
	fi, err := o.r.Lstat(name)
	if err != nil {
		return fileInfo{}, err
	}
	return toInfo(fi), nil
}

func (o rootDir) create(name string, perm fs.FileMode) (*os.File, error) {
	return o.r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}

func (o rootDir) rename(from, to string) error { return o.r.Rename(from, to) }

func (o rootDir) remove(name string) error { return o.r.Remove(name) }

func (o rootDir) mkdir(name string, perm fs.FileMode) (*Dir, error) {
	if err := o.r.Mkdir(name, perm); err != nil {
		return nil, err
	}
	sub, err := o.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &Dir{h: sub}, nil
}

// checkWalk checks the elements of path in turn, by path, as walk does
// on Linux by descriptor: a link another user owns is refused before the
// system follows it. With create, missing directories are made.
func checkWalk(path string, create, followLast bool, perm fs.FileMode) error {
	at, cur := ".", "." // for messages; for the system, links left in
	if strings.HasPrefix(path, "/") {
		at, cur = "/", ""
	}
	comps := components(path)
	for i, name := range comps {
		next := filepath.Join(at, name)
		cur += "/" + name
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) && create && name != ".." {
			if err = os.Mkdir(cur, perm); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = os.Lstat(cur)
			}
		}
		if err != nil {
			return err
		}
		info := toInfo(fi)
		switch {
		case info.mode.IsDir():
		case info.mode&fs.ModeSymlink == 0:
			return &fs.PathError{Op: "open", Path: next, Err: syscall.ENOTDIR}
		case i == len(comps)-1 && !followLast:
			return unsafef("%s is a symbolic link (owned by uid %d), not a directory: name the directory itself", next, info.uid)
		default:
			if err := checkLink(next, info.uid); err != nil {
				return err
			}
		}
		at = next
	}
	return nil
}

func toInfo(fi fs.FileInfo) fileInfo {
	uid := -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		uid = int(st.Uid)
	}
	return fileInfo{uid: uid, mode: fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSticky)}
}
