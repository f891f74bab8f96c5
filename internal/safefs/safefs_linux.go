package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symbolic links one walk follows, as the kernel's
// own lookups do.
const maxLinks = 40

// handle is a Dir's descriptor (O_RDONLY|O_DIRECTORY) in an *os.File: its
// operations run under the file's reference (SyscallConn), so that Close
// cannot free the number while one is under way.
type handle = *os.File

func makeDir(path string, perm fs.FileMode) (*Dir, error) {
	pfd, err := walk(path, true, false, uint32(perm))
	if err != nil {
		return nil, &fs.PathError{Op: "directory", Path: path, Err: err}
	}
	fd, err := openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	unix.Close(pfd)
	if err != nil {
		return nil, &fs.PathError{Op: "directory", Path: path, Err: err}
	}
	d := &Dir{path: path, h: os.NewFile(uintptr(fd), path)}
	if err := checkOwnDir(path, d.stat); err != nil {
		d.h.Close()
		return nil, err
	}
	return d, nil
}

func (d *Dir) with(fn func(dirOps) error) error {
	if d.closed.Load() {
		return fs.ErrClosed
	}
	rc, err := d.h.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(fdDir{int(fd), d.path}) }); err != nil {
		return fs.ErrClosed // Close won the race
	}
	return ferr
}

func (d *Dir) close() error { return d.h.Close() }

// withParent walks to the directory path, following links root or the
// caller owns, and calls fn with it and what it is.
func withParent(path string, fn func(dirOps, fileInfo) error) error {
	fd, err := walk(path, false, true, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	o := fdDir{fd, path}
	fi, err := o.lstat(".")
	if err != nil {
		return err
	}
	return fn(o, fi)
}

// fdDir is a directory's descriptor (O_PATH will do) and its path, for
// messages and file names.
type fdDir struct {
	fd   int
	path string
}

func (o fdDir) lstat(name string) (fileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(o.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileInfo{}, err
	}
	return statInfo(&st), nil
}

func (o fdDir) create(name string, perm fs.FileMode) (*os.File, error) {
	fd, err := openat(o.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(o.path, name)), nil
}

func (o fdDir) rename(from, to string) error { return unix.Renameat(o.fd, from, o.fd, to) }

func (o fdDir) remove(name string) error { return unix.Unlinkat(o.fd, name, 0) }

func (o fdDir) mkdir(name string, perm fs.FileMode) (*Dir, error) {
	if err := unix.Mkdirat(o.fd, name, uint32(perm)); err != nil {
		return nil, err
	}
	fd, err := openat(o.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{h: os.NewFile(uintptr(fd), filepath.Join(o.path, name))}, nil
}

// walk opens the directory path names an element at a time from "/" or
// ".", each with O_PATH|O_NOFOLLOW relative to the one before, and returns
// its O_PATH descriptor: no element is looked up by a path another user
// could change meanwhile. A symbolic link is followed only if root or the
// caller owns it (checked on the link's own descriptor), the last
// element's only with followLast. With create, missing directories are
// made with perm.
func walk(path string, create, followLast bool, perm uint32) (int, error) {
	at := "."
	if strings.HasPrefix(path, "/") {
		at = "/"
	}
	fd, err := openat(unix.AT_FDCWD, at, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: at, Err: err}
	}
	links := 0
	for comps := components(path); len(comps) > 0; {
		name := comps[0]
		comps = comps[1:]
		next := filepath.Join(at, name)
		nfd, err := openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT && create && name != ".." {
			if err = unix.Mkdirat(fd, name, perm); err != nil && err != unix.EEXIST {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "mkdir", Path: next, Err: err}
			}
			nfd, err = openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err != nil {
			unix.Close(fd)
			return -1, &fs.PathError{Op: "open", Path: next, Err: err}
		}
		var st unix.Stat_t
		if err = unix.Fstat(nfd, &st); err != nil {
			err = &fs.PathError{Op: "stat", Path: next, Err: err}
		}
		var target string
		switch t := st.Mode & unix.S_IFMT; {
		case err != nil:
		case t == unix.S_IFDIR:
			unix.Close(fd)
			fd, at = nfd, next
			continue
		case t != unix.S_IFLNK:
			err = &fs.PathError{Op: "open", Path: next, Err: unix.ENOTDIR}
		case len(comps) == 0 && !followLast:
			err = unsafef("%s is a symbolic link (owned by uid %d), not a directory: name the directory itself", next, st.Uid)
		case links == maxLinks:
			err = &fs.PathError{Op: "open", Path: path, Err: unix.ELOOP}
		default:
			if err = checkLink(next, int(st.Uid)); err == nil {
				links++
				target, err = readlink(nfd)
			}
		}
		unix.Close(nfd)
		if err == nil && target == "" {
			err = &fs.PathError{Op: "readlink", Path: next, Err: unix.ENOENT}
		}
		if err == nil && strings.HasPrefix(target, "/") {
			unix.Close(fd)
			at = "/"
			if fd, err = openat(unix.AT_FDCWD, at, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
				return -1, &fs.PathError{Op: "open", Path: at, Err: err}
			}
		}
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		// The target resolves from the link's directory, which fd still is.
		comps = append(components(target), comps...)
	}
	return fd, nil
}

// readlink reads the target of the link open (O_PATH) as fd.
func readlink(fd int) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// openat is unix.Openat, again when interrupted (as os.OpenFile does).
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

func statInfo(st *unix.Stat_t) fileInfo {
	m := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return fileInfo{uid: int(st.Uid), mode: m}
}
