package control

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A client trusts a server as the server trusts a client: by the uid the
// kernel recorded for the other end of the socket (SO_PEERCRED), read
// before anything is sent. Where a socket was found only helps to find
// it: anyone may create a socket file in a directory they can write.

// ErrUntrusted reports a control server a client refuses to speak to: it
// runs as a uid the client does not trust, or it is not the process the
// client asked for.
var ErrUntrusted = errors.New("control server not trusted")

// dialTimeout bounds connecting to a server and its handshake.
const dialTimeout = 5 * time.Second

// runUserDir holds the users' runtime directories (XDG_RUNTIME_DIR),
// which root searches for sockets; rootDir is RootDir. Tests move them.
var (
	runUserDir = "/run/user"
	rootDir    = RootDir
)

// Socket is a control socket, and the server a client accepts there.
type Socket struct {
	Path string
	// PID is the process the server must be (0: any).
	PID int
	// UID is a uid the server is trusted to run as besides the caller's
	// own and root's (0, root's, adds none). Sockets sets it to the uid
	// its server runs as.
	UID int
}

// Dial connects to the control server at path, which must run as the
// caller's uid or root's (see Socket.Dial).
func Dial(path string) (*Client, error) { return Socket{Path: path}.Dial() }

// DialPID connects to the control server of process pid, found as
// FindSocket finds it. The server must be process pid, running as the
// caller's uid, root's, or (for root) the user's whose runtime directory
// holds the socket.
func DialPID(pid int) (*Client, error) {
	s, err := FindSocket(pid)
	if err != nil {
		return nil, err
	}
	return s.Dial()
}

// Dial connects to the server at s.Path and says hello. It first checks
// the server's credentials (SO_PEERCRED): a server that is not process
// s.PID (when not 0), or that runs as a uid other than the caller's,
// root's and s.UID, is refused before anything is sent to it, with an
// error wrapping ErrUntrusted.
func (s Socket) Dial() (*Client, error) {
	c, err := s.connect(context.Background())
	if err != nil {
		return nil, err
	}
	// A trusted server that does not answer must not hang the caller.
	c.SetDeadline(time.Now().Add(dialTimeout))
	cl, err := NewClient(c)
	if err != nil {
		return nil, fmt.Errorf("%w (socket %s)", err, s.Path)
	}
	c.SetDeadline(time.Time{})
	return cl, nil
}

// connect connects to s.Path and checks who serves it.
func (s Socket) connect(ctx context.Context) (*net.UnixConn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.DialContext(ctx, "unix", s.Path)
	if err != nil {
		return nil, fmt.Errorf("control: dial: %w", err)
	}
	c := nc.(*net.UnixConn)
	peer, err := peerCred(c)
	if err == nil && !s.trusts(peer) {
		err = fmt.Errorf("the server is pid %d uid %d, want %s; nothing was sent: %w", peer.pid, peer.uid, s.want(), ErrUntrusted)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("control: dial %s: %w", s.Path, err)
	}
	return c, nil
}

func (s Socket) trusts(peer cred) bool {
	return (s.PID == 0 || peer.pid == s.PID) && trustedUID(peer.uid, s.UID)
}

// trustedUID: the caller's uid, root's, or extra.
func trustedUID(uid, extra int) bool { return uid == os.Getuid() || uid == 0 || uid == extra }

// want says whom s accepts, for errors.
func (s Socket) want() string {
	uids := "uid " + strconv.Itoa(os.Getuid()) + " (yours)"
	if s.UID != 0 && s.UID != os.Getuid() {
		uids += ", " + strconv.Itoa(s.UID)
	}
	if os.Getuid() != 0 {
		uids += " or 0 (root)"
	}
	if s.PID != 0 {
		return "pid " + strconv.Itoa(s.PID) + " with " + uids
	}
	return uids
}

// searchDir is a directory Sockets searches and whom it trusts there.
type searchDir struct {
	path string
	// owners are the uids the directory may belong to; closed are the
	// permission bits it must not have.
	owners []int
	closed fs.FileMode
	// uid is trusted besides the caller's and root's (0: none more).
	uid int
}

// searchDirs are the directories Sockets searches, most trusted first.
func searchDirs() []searchDir {
	me := os.Getuid()
	dirs := []searchDir{{path: rootDir, owners: []int{me, 0}, closed: 0o022}}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		dirs = append(dirs, searchDir{path: filepath.Join(d, "uebpf"), owners: []int{me, 0}, closed: 0o022})
	}
	// The temporary directory is everyone's: only a directory of ours
	// that no one else may enter counts.
	dirs = append(dirs, searchDir{path: filepath.Join(os.TempDir(), "uebpf-"+strconv.Itoa(me)), owners: []int{me}, closed: 0o077})
	if me != 0 {
		return dirs
	}
	// Root may control any user's application: a user's sockets are in
	// their runtime directory, which must be theirs.
	ents, _ := os.ReadDir(runUserDir)
	for _, e := range ents {
		uid, err := strconv.Atoi(e.Name())
		if err != nil || uid < 0 {
			continue
		}
		home := filepath.Join(runUserDir, e.Name())
		if checkDir(home, []int{uid}, 0o022) != nil {
			continue
		}
		dirs = append(dirs, searchDir{path: filepath.Join(home, "uebpf"), owners: []int{uid, 0}, closed: 0o022, uid: uid})
	}
	return dirs
}

// checkDir checks that dir is a directory (not a link to one) belonging
// to one of owners and without the permission bits closed.
func checkDir(dir string, owners []int, closed fs.FileMode) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	uid, ok := ownerUID(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: ignored", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory: ignored", dir)
	case !ok || !slices.Contains(owners, uid):
		return fmt.Errorf("%s belongs to uid %d, not %s: ignored", dir, uid, uidList(owners))
	case fi.Mode().Perm()&closed != 0:
		return fmt.Errorf("%s has mode %v, which lets others write to it: ignored", dir, fi.Mode().Perm())
	}
	return nil
}

func uidList(uids []int) string {
	s := make([]string, len(uids))
	for i, u := range uids {
		s[i] = strconv.Itoa(u)
	}
	return strings.Join(s, " or ")
}

// Sockets lists the control servers the caller trusts and may reach, by
// pid: the sockets named "<pid>.sock"
//   - in RootDir and $XDG_RUNTIME_DIR/uebpf, directories belonging to the
//     caller or root that no one else may write;
//   - in uebpf-<uid> of the temporary directory, which must belong to the
//     caller and have mode 0700;
//   - for root, in /run/user/<uid>/uebpf of each user whose
//     /run/user/<uid> is theirs, where that uid is trusted too;
//
// whose file belongs to a trusted uid, and whose server answers as
// process <pid> running as a trusted uid (SO_PEERCRED of a connection on
// which nothing is sent). Each Socket's UID is its server's uid. A socket
// another user planted where the caller looks is not listed.
func Sockets() ([]Socket, error) { return findSockets(0) }

// FindSocket returns the socket of process pid as Sockets lists it, or
// else DefaultPath(pid) trusted as the caller's: Dial then says what is
// wrong with it.
func FindSocket(pid int) (Socket, error) {
	if pid <= 0 {
		return Socket{}, fmt.Errorf("control: pid %d", pid)
	}
	if socks, err := findSockets(pid); err == nil && len(socks) > 0 {
		return socks[0], nil
	}
	path, err := DefaultPath(pid)
	if err != nil {
		return Socket{}, fmt.Errorf("control: %w", err)
	}
	return Socket{Path: path, PID: pid}, nil
}

// findSockets is Sockets, only for pid when it is not 0.
func findSockets(pid int) ([]Socket, error) {
	if err := supported(); err != nil {
		return nil, fmt.Errorf("control: sockets: %w", err)
	}
	var out []Socket
	var errs []error
	seen := map[string]bool{}
	for _, d := range searchDirs() {
		if seen[d.path] {
			continue
		}
		seen[d.path] = true
		if err := checkDir(d.path, d.owners, d.closed); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		ents, err := os.ReadDir(d.path)
		if err != nil {
			if !errors.Is(err, fs.ErrPermission) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".sock")
			n, err := strconv.Atoi(name)
			if !ok || err != nil || n <= 0 || (pid != 0 && n != pid) || e.Type() != fs.ModeSocket {
				continue
			}
			if s, ok := d.verify(filepath.Join(d.path, e.Name()), n); ok {
				out = append(out, s)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Socket) int { return cmp.Compare(a.PID, b.PID) })
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("control: sockets: %w", errors.Join(errs...))
	}
	return out, nil
}

// verify checks the socket file at path and the server behind it, which
// must be process pid.
func (d searchDir) verify(path string, pid int) (Socket, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Socket{}, false
	}
	if uid, ok := ownerUID(fi); !ok || !trustedUID(uid, d.uid) {
		return Socket{}, false
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return Socket{}, false // a dead process's, or not ours to open
	}
	defer c.Close()
	peer, err := peerCred(c.(*net.UnixConn))
	if err != nil || peer.pid != pid || !trustedUID(peer.uid, d.uid) {
		return Socket{}, false
	}
	return Socket{Path: path, PID: pid, UID: peer.uid}, true
}
