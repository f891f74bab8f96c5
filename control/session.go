package control

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/internal/safefs"
	uemaps "github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/tracepoint"
)

// session is a tracepoint.Session owned by the server: it outlives the
// connection that enabled it, until disabled or the server closes.
type session struct {
	id   uint64
	ts   *tracepoint.Session
	size int    // the rings' bytes, as counted in Server.rings
	file string // the file backing its channel, if any

	mu    sync.Mutex
	atts  []attachment
	colls []*uebpf.Collection // closed after the attachments
	// consumer is the connection that holds the session's channel.
	consumer *conn
	closed   bool
}

type attachment struct {
	id uint64
	a  *tracepoint.Attachment
}

func (ss *session) close() {
	ss.mu.Lock()
	atts, colls := ss.atts, ss.colls
	ss.atts, ss.colls, ss.closed = nil, nil, true
	ss.mu.Unlock()
	for _, a := range atts {
		a.a.Close()
	}
	ss.ts.Close()
	for _, c := range colls {
		c.Close()
	}
	if ss.file != "" {
		// Closed cleanly: nothing to recover. (A consumer that maps the
		// channel keeps reading it.)
		os.Remove(ss.file)
	}
}

func (ss *session) info() SessionInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	si := SessionInfo{ID: ss.id, BufferSize: ss.ts.BufferSize(), Mode: ss.ts.Mode().String(), File: ss.file,
		Stats: stats(ss.ts.Stats()), Consumed: ss.consumer != nil, Attachments: []AttachmentInfo{}}
	for _, a := range ss.atts {
		si.Attachments = append(si.Attachments, a.info())
	}
	for _, c := range ss.colls {
		si.Maps = append(si.Maps, slices.Sorted(maps.Keys(c.Maps))...)
	}
	return si
}

// findMap returns the map called name of the session's objects, the first
// loaded first.
func (ss *session) findMap(name string) uemaps.Map {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.colls {
		if m := c.Maps[name]; m != nil {
			return m
		}
	}
	return nil
}

func (a attachment) info() AttachmentInfo {
	return AttachmentInfo{ID: a.id, Tracepoint: a.a.Tracepoint().Name(), Description: a.a.String(), Stats: stats(a.a.Stats())}
}

func stats(s tracepoint.Stats) Stats {
	return Stats{Fired: s.Fired, Matched: s.Matched, Recorded: s.Recorded, Dropped: s.Dropped, Errors: s.Errors}
}

func (s *Server) sessionInfos() []SessionInfo {
	s.mu.Lock()
	ss := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()
	slices.SortFunc(ss, func(a, b *session) int { return int(a.id) - int(b.id) })
	out := make([]SessionInfo, 0, len(ss))
	for _, x := range ss {
		out = append(out, x.info())
	}
	return out
}

func (s *Server) session(id uint64) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		return nil, fail(CodeNotFound, "no session %d", id)
	}
	return ss, nil
}

// matchTracepoints returns the tracepoints called name, or matching it as
// a glob (path.Match: "http:*").
func matchTracepoints(name string) ([]*tracepoint.Point, error) {
	if !strings.ContainsAny(name, `*?[\`) {
		p, err := tracepoint.Lookup(name)
		if err != nil {
			return nil, &codedError{CodeNotFound, err}
		}
		return []*tracepoint.Point{p}, nil
	}
	if _, err := path.Match(name, ""); err != nil {
		return nil, fail(CodeBadRequest, "tracepoint pattern %q: %w", name, err)
	}
	var out []*tracepoint.Point
	for _, p := range tracepoint.List() {
		if ok, _ := path.Match(name, p.Name()); ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fail(CodeNotFound, "no tracepoint matches %q", name)
	}
	return out, nil
}

// listTracepoints describes the tracepoints matching pattern (all if it is
// empty), with their fields if withFields.
func listTracepoints(pattern string, withFields bool) ([]TracepointInfo, error) {
	ps := tracepoint.List()
	if pattern != "" {
		var err error
		if ps, err = matchTracepoints(pattern); err != nil {
			return nil, err
		}
	}
	out := make([]TracepointInfo, 0, len(ps))
	for _, p := range ps {
		info := p.Info()
		ti := TracepointInfo{Name: p.Name(), Size: info.Size, RecordSize: info.RecordSize(), Stats: stats(p.Stats())}
		if withFields {
			ti.Fields = make([]FieldInfo, 0, len(info.Fields))
			for _, f := range info.Fields {
				ti.Fields = append(ti.Fields, FieldInfo{Name: f.Name, Type: fieldType(f), Offset: f.Offset, Size: f.Size})
			}
		}
		out = append(out, ti)
	}
	return out, nil
}

// fieldType writes f's type as tracepoint.ParseSpec reads it.
func fieldType(f tracepoint.Field) string {
	n := strconv.Itoa(8 * f.Size)
	switch f.Kind {
	case tracepoint.Unsigned:
		return "u" + n
	case tracepoint.Signed:
		return "s" + n
	case tracepoint.Float:
		return "f" + n
	case tracepoint.Bool:
		return "bool"
	case tracepoint.String:
		return "string[" + strconv.Itoa(f.Size) + "]"
	}
	return f.Kind.String()
}

// contextOptions maps context field names to options.
var contextOptions = map[string]func() tracepoint.Option{
	"timestamp": tracepoint.WithTimestamp,
	"vtid":      tracepoint.WithThreadID,
	"goid":      tracepoint.WithGoroutineID,
}

// target is one attachment enable is to make.
type target struct {
	p    *tracepoint.Point
	prog *uebpf.Program
}

// enable attaches a filter, a program or nothing (record all) to the
// tracepoints a request names, in a new session or an existing one: all
// of them or none.
func (s *Server) enable(req *Request) (SessionInfo, error) {
	switch {
	case req.Filter != "" && req.Object != nil:
		return SessionInfo{}, fail(CodeBadRequest, "enable: a filter or an object, not both")
	case req.Object == nil && req.Program != "":
		return SessionInfo{}, fail(CodeBadRequest, "enable: program %q without an object", req.Program)
	case req.Object != nil && req.Program == "" && req.Tracepoint != "":
		return SessionInfo{}, fail(CodeBadRequest, "enable: an object's programs attach by section without a program name; give no tracepoint, or name the program")
	case req.Object == nil && req.Tracepoint == "":
		return SessionInfo{}, fail(CodeBadRequest, "enable: no tracepoint")
	case req.BufferSize < 0 || req.BufferSize > s.opts.MaxBufferSize:
		return SessionInfo{}, fail(CodeLimit, "enable: buffer of %d bytes (at most %d; the application raises it with control.Options.MaxBufferSize)", req.BufferSize, s.opts.MaxBufferSize)
	case req.Session != 0 && (req.BufferSize != 0 || req.Mode != "" || req.BlockTimeout != 0 || req.FileBacked):
		return SessionInfo{}, fail(CodeBadRequest, "enable: buffer size, mode and file backing are a new session's: not with session %d", req.Session)
	case req.ContextSize < 0 || req.ContextSize > 1<<20:
		return SessionInfo{}, fail(CodeBadRequest, "enable: context size %d", req.ContextSize)
	}
	var opts []tracepoint.Option
	for _, name := range req.Context {
		o, ok := contextOptions[strings.TrimPrefix(name, "$ctx.")]
		if !ok {
			return SessionInfo{}, fail(CodeBadRequest, "enable: unknown context field %q (timestamp, vtid, goid)", name)
		}
		opts = append(opts, o())
	}
	var targets []target
	if req.Tracepoint != "" {
		ps, err := matchTracepoints(req.Tracepoint)
		if err != nil {
			return SessionInfo{}, fmt.Errorf("enable: %w", err)
		}
		for _, p := range ps {
			targets = append(targets, target{p: p})
		}
	}

	var coll *uebpf.Collection
	if req.Object != nil {
		lo := *s.opts.LoadOptions
		if req.ContextSize > 0 {
			lo.ContextSize = req.ContextSize
		}
		var err error
		if coll, err = uebpf.Load(bytes.NewReader(req.Object), &lo); err != nil {
			return SessionInfo{}, &codedError{CodeRefused, fmt.Errorf("enable: loading the object: %w", err)}
		}
		if targets, err = programTargets(coll, req.Program, targets); err != nil {
			coll.Close()
			return SessionInfo{}, fmt.Errorf("enable: %w", err)
		}
	}

	ss, created, err := s.sessionFor(req)
	if err != nil {
		if coll != nil {
			coll.Close()
		}
		return SessionInfo{}, fmt.Errorf("enable: %w", err)
	}
	var made []*tracepoint.Attachment
	undo := func() {
		for _, a := range made {
			a.Close()
		}
		if coll != nil {
			coll.Close()
		}
		if created {
			s.dropSession(ss)
		}
	}
	for _, t := range targets {
		o := slices.Clip(opts)
		switch {
		case t.prog != nil:
			o = append(o, tracepoint.Program(t.prog))
		case req.Filter != "":
			o = append(o, tracepoint.Filter(req.Filter))
		}
		a, err := ss.ts.Enable(t.p, o...)
		if err != nil {
			undo()
			switch {
			case errors.Is(err, tracepoint.ErrSessionClosed):
				return SessionInfo{}, &codedError{CodeNotFound, fmt.Errorf("enable: %w", err)}
			case errors.Is(err, tracepoint.ErrTooManyAttachments):
				return SessionInfo{}, fail(CodeLimit, "enable: session has %d attachments (at most %d; the application raises it with control.Options.MaxAttachments)", ss.ts.Attachments(), s.opts.MaxAttachments)
			}
			return SessionInfo{}, &codedError{CodeRefused, fmt.Errorf("enable: %w", err)}
		}
		made = append(made, a)
	}
	if created {
		if err := s.register(ss); err != nil {
			undo()
			return SessionInfo{}, fmt.Errorf("enable: %w", err)
		}
	}
	s.mu.Lock()
	ids := make([]uint64, len(made))
	for i := range made {
		s.nextID++
		ids[i] = s.nextID
	}
	s.mu.Unlock()
	ss.mu.Lock()
	if ss.closed {
		// Disabled, or the server closed, while attaching.
		ss.mu.Unlock()
		created = false
		undo()
		return SessionInfo{}, fail(CodeNotFound, "enable: session %d was disabled meanwhile", ss.id)
	}
	for i, a := range made {
		ss.atts = append(ss.atts, attachment{ids[i], a})
	}
	if coll != nil {
		ss.colls = append(ss.colls, coll)
	}
	ss.mu.Unlock()
	return ss.info(), nil
}

// programTargets pairs the programs of coll with their tracepoints: the
// program called name with each of targets, or without a name every
// program of a tracepoint section with its tracepoint.
func programTargets(coll *uebpf.Collection, name string, targets []target) ([]target, error) {
	if name != "" {
		prog := coll.Programs[name]
		if prog == nil {
			return nil, fail(CodeNotFound, "no program %q in the object (it has %s)", name, strings.Join(slices.Sorted(maps.Keys(coll.Programs)), ", "))
		}
		for i := range targets {
			targets[i].prog = prog
		}
		return targets, nil
	}
	for _, pname := range slices.Sorted(maps.Keys(coll.Programs)) {
		prog := coll.Programs[pname]
		rest, ok := strings.CutPrefix(prog.Section(), tracepoint.SectionPrefix)
		if !ok {
			continue
		}
		p, err := tracepoint.Lookup(strings.Replace(rest, "/", ":", 1))
		if err != nil {
			return nil, &codedError{CodeNotFound, fmt.Errorf("program %s (section %s): %w", pname, prog.Section(), err)}
		}
		targets = append(targets, target{p: p, prog: prog})
	}
	if len(targets) == 0 {
		return nil, fail(CodeNotFound, "no program of the object is in a %s<provider>/<name> section", tracepoint.SectionPrefix)
	}
	return targets, nil
}

// sessionFor returns the session a request enables into: the one it
// names, or a new one, which enable registers (register) once its
// attachments are made, so that a failed enable uses up no session id.
func (s *Server) sessionFor(req *Request) (ss *session, created bool, err error) {
	if req.Session != 0 {
		ss, err := s.session(req.Session)
		return ss, false, err
	}
	o := tracepoint.SessionOptions{BufferSize: req.BufferSize, MaxAttachments: s.opts.MaxAttachments, BlockTimeout: time.Duration(req.BlockTimeout)}
	if o.BufferSize == 0 {
		o.BufferSize = s.opts.BufferSize
	}
	if req.Mode != "" {
		if o.Mode, err = tracepoint.ParseMode(req.Mode); err != nil {
			return nil, false, &codedError{CodeBadRequest, err}
		}
	}
	s.mu.Lock()
	n := len(s.sessions)
	if n >= s.opts.MaxSessions {
		s.mu.Unlock()
		return nil, false, fail(CodeLimit, "%d sessions already (at most %d): disable some, or the application raises it with control.Options.MaxSessions", n, s.opts.MaxSessions)
	}
	// Reserved before the rings are made, as they will be: rounded up to
	// whole rings per P.
	size := tracepoint.BufferSizeFor(o.BufferSize)
	if s.rings+size > s.opts.MaxRingMemory {
		used := s.rings
		s.mu.Unlock()
		return nil, false, fail(CodeLimit, "a session of %d bytes of rings: %d of %d bytes in use: disable a session, ask for a smaller buffer, or the application raises it with control.Options.MaxRingMemory", size, used, s.opts.MaxRingMemory)
	}
	s.rings += size
	s.files++
	nfile := s.files
	s.mu.Unlock()
	ss = &session{size: size}
	if req.FileBacked {
		f, path, err := s.ringFile(nfile)
		if err != nil {
			s.unreserve(size)
			return nil, false, &codedError{CodeInternal, err}
		}
		o.File, ss.file = f, path
	}
	if ss.ts, err = tracepoint.NewSession(&o); err != nil {
		s.unreserve(size)
		if ss.file != "" {
			os.Remove(ss.file)
		}
		return nil, false, &codedError{CodeInternal, err}
	}
	return ss, true, nil
}

// ringFile makes the file of a file-backed session, in the socket's
// directory.
func (s *Server) ringFile(n int) (*os.File, string, error) {
	d, err := safefs.MakeDir(filepath.Dir(s.path), 0o700)
	if err != nil {
		return nil, "", fmt.Errorf("session file: %w", err)
	}
	defer d.Close()
	name := fmt.Sprintf("%d-session-%d.ring", os.Getpid(), n)
	f, err := d.Create(name, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("session file: %w", err)
	}
	return f, filepath.Join(d.Path(), name), nil
}

func (s *Server) unreserve(size int) {
	s.mu.Lock()
	s.rings -= size
	s.mu.Unlock()
}

// register gives a session made for an enable its id, unless the server
// closed or reached its limit meanwhile.
func (s *Server) register(ss *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fail(CodeNotFound, "server closed")
	case len(s.sessions) >= s.opts.MaxSessions:
		return fail(CodeLimit, "%d sessions already (at most %d): disable some, or the application raises it with control.Options.MaxSessions", len(s.sessions), s.opts.MaxSessions)
	}
	s.nextID++
	ss.id = s.nextID
	s.sessions[ss.id] = ss
	return nil
}

// dropSession removes a session from the server and closes it.
func (s *Server) dropSession(ss *session) {
	s.mu.Lock()
	if s.sessions[ss.id] == ss {
		delete(s.sessions, ss.id)
	}
	s.rings -= ss.size
	s.mu.Unlock()
	ss.close()
}

// disable closes a session, or one attachment of one, and says what it
// closed.
func (s *Server) disable(req *Request) ([]AttachmentInfo, error) {
	switch {
	case req.Session != 0 && req.Attachment == 0:
		ss, err := s.session(req.Session)
		if err != nil {
			return nil, fmt.Errorf("disable: %w", err)
		}
		info := ss.info()
		s.dropSession(ss)
		return info.Attachments, nil
	case req.Attachment != 0:
		s.mu.Lock()
		ss := slices.Collect(maps.Values(s.sessions))
		s.mu.Unlock()
		for _, x := range ss {
			if req.Session != 0 && x.id != req.Session {
				continue
			}
			x.mu.Lock()
			i := slices.IndexFunc(x.atts, func(a attachment) bool { return a.id == req.Attachment })
			var a attachment
			if i >= 0 {
				a = x.atts[i]
				x.atts = slices.Delete(x.atts, i, i+1)
			}
			x.mu.Unlock()
			if a.a != nil {
				info := a.info()
				return []AttachmentInfo{info}, a.a.Close()
			}
		}
		return nil, fail(CodeNotFound, "disable: no attachment %d", req.Attachment)
	}
	return nil, fail(CodeBadRequest, "disable: no session or attachment")
}

// maxIterate bounds the entries of one iterate reply.
const maxIterate = 100000

// mapOp reads or writes a map of a session's objects.
func (s *Server) mapOp(req *Request, resp *Response) error {
	ss, err := s.session(req.Session)
	if err != nil {
		return fmt.Errorf("%s: %w", req.Op, err)
	}
	m := ss.findMap(req.Map)
	if m == nil {
		return fail(CodeNotFound, "%s: session %d has no map %q", req.Op, ss.id, req.Map)
	}
	var key any = []byte(req.Key)
	if m.KeySize() == 0 {
		key = nil
	}
	if req.Op != OpMapIterate && key != nil && len(req.Key) != int(m.KeySize()) {
		return fail(CodeBadRequest, "%s: map %s: key of %d bytes, want %d", req.Op, m.Name(), len(req.Key), m.KeySize())
	}
	switch req.Op {
	case OpMapLookup:
		var v []byte
		err = m.Lookup(key, &v)
		resp.Value = v
	case OpMapUpdate:
		err = m.Update(key, []byte(req.Value), uemaps.UpdateFlags(req.Flags))
	case OpMapDelete:
		err = m.Delete(key)
	case OpMapIterate:
		limit := req.Max
		if limit <= 0 || limit > maxIterate {
			limit = maxIterate
		}
		// Hex doubles the bytes: stay well inside a frame.
		budget := MaxFrameSize / 4
		it := m.Iterate()
		var k, v []byte
		for len(resp.Entries) < limit && budget > 0 && it.Next(&k, &v) {
			resp.Entries = append(resp.Entries, Entry{Key: k, Value: v})
			budget -= len(k) + len(v) + 32
			k, v = nil, nil
		}
		err = it.Err()
		resp.End = err == nil && len(resp.Entries) < limit && budget > 0
	}
	if err != nil {
		code := CodeBadRequest
		if errors.Is(err, uemaps.ErrKeyNotExist) {
			code = CodeNotFound
		}
		return &codedError{code, fmt.Errorf("%s: %w", req.Op, err)}
	}
	return nil
}
