package tracepoint

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/internal/bpfbuild"
	"github.com/uebpf/uebpf/internal/safefs"
)

// hdrEvent has a field of every kind.
type hdrEvent struct {
	Status uint16
	Small  int8
	Flag   bool
	Delta  int32
	Ratio  float32
	Big    uint64
	Neg    int64
	Avg    float64
	Name   [12]byte
	Code   uint32
}

// padded has explicit padding, inside and at the end.
type padded struct {
	A uint8
	_ [3]byte
	B uint32
	C uint8
	_ [7]byte
}

const hdrSpec = "status:u16,small:s8,flag:bool,delta:s32,ratio:f32,big:u64,neg:s64,avg:f64,name:string[12],code:u32"

// hdrTracepoint declares hdr:event once per process (tests may run with
// -count > 1).
func hdrTracepoint(t *testing.T) *Tracepoint[hdrEvent] {
	tp, err := Declare[hdrEvent]("hdr", "event")
	if errors.Is(err, ErrExists) {
		return hdrOnce
	}
	if err != nil {
		t.Fatal(err)
	}
	hdrOnce = tp
	return tp
}

var hdrOnce *Tracepoint[hdrEvent]

func TestParseSpecMatchesGoLayout(t *testing.T) {
	tp := hdrTracepoint(t)
	info, err := ParseSpec("hdr:event", hdrSpec)
	if err != nil {
		t.Fatal(err)
	}
	var fromGo, fromSpec bytes.Buffer
	if err := Header(&fromGo, tp.Info()); err != nil {
		t.Fatal(err)
	}
	if err := Header(&fromSpec, info); err != nil {
		t.Fatal(err)
	}
	if fromGo.String() != fromSpec.String() {
		t.Errorf("headers differ:\nfrom Go:\n%s\nfrom the spec:\n%s", &fromGo, &fromSpec)
	}
	for _, bad := range []string{"a:u7", "a:int", "a", "1a:u8", "a:u8,a:u8", "a:string[0]", "a:string[x]", "a:f16"} {
		if _, err := ParseSpec("p:n", bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
	if _, err := ParseSpec("nocolon", "a:u8"); err == nil {
		t.Error("a name without provider accepted")
	}
}

// A clang-built program reads the payload and context through the
// generated header, attached by section name.
func TestHeaderCompilesAndAttaches(t *testing.T) {
	if _, err := exec.LookPath(bpfbuild.Clang); err != nil {
		t.Skipf("%s not installed: cannot compile the header", bpfbuild.Clang)
	}
	tp := hdrTracepoint(t)
	dir := t.TempDir()
	if err := WriteHeader(filepath.Join(dir, "tp.h"), tp.Name()); err != nil {
		t.Fatal(err)
	}
	src := `#include "tp.h"
#define SEC(n) __attribute__((section(n), used))
SEC("uebpf/tracepoint/hdr/event")
int keep(struct hdr_event_record *r)
{
	return r->payload.status >= 500 && r->payload.name[0] == 'x' &&
	       r->payload.small == -3 && r->payload.flag && r->payload.code == 7 &&
	       r->payload.neg == -1 && r->ctx.vpid > 0 && r->ctx.procname[0] != 0;
}
char LICENSE[] SEC("license") = "GPL";
`
	obj := compileC(t, dir, "prog", src)
	coll, err := uebpf.LoadFile(obj, &uebpf.Options{Engine: uebpf.EngineAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if got, want := coll.Programs["keep"].ContextSize(), tp.Info().RecordSize(); got != want {
		t.Errorf("verified for %d bytes, the record has %d", got, want)
	}
	link, err := AttachCollection(coll)
	if err != nil {
		t.Fatal(err)
	}
	before := tp.Stats().Matched
	match := hdrEvent{Status: 503, Small: -3, Flag: true, Code: 7, Neg: -1}
	copy(match.Name[:], "xyz")
	tp.Fire(&match)
	miss := match
	miss.Code = 8
	tp.Fire(&miss)
	if got := tp.Stats().Matched - before; got != 1 {
		t.Errorf("program matched %d events, want 1", got)
	}
	if err := link.Close(); err != nil {
		t.Fatal(err)
	}
	tp.Fire(&match)
	if got := tp.Stats().Matched - before; got != 1 {
		t.Errorf("matched %d events after Close, want 1", got)
	}

	unknown := compileC(t, dir, "unknown", strings.ReplaceAll(src, "hdr/event", "hdr/nosuch"))
	coll2, err := uebpf.LoadFile(unknown, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll2.Close()
	if _, err := AttachCollection(coll2); !errors.Is(err, ErrUnknown) {
		t.Errorf("attaching to an unknown tracepoint: %v", err)
	}
}

func compileC(t *testing.T, dir, name, src string) string {
	t.Helper()
	c, o := filepath.Join(dir, name+".c"), filepath.Join(dir, name+".o")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := bpfbuild.Compile(c, o, dir); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestHeaderPadding(t *testing.T) {
	tp := declare[padded](t)
	var b bytes.Buffer
	if err := Header(&b, tp.Info()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unsigned char __pad1[3];", "unsigned char __pad9[7];", "== 16,"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("header lacks %q:\n%s", want, &b)
		}
	}
}

// TestWriteHeaderReplaces checks that WriteHeader replaces the file at
// its path, and refuses to write through a link there.
func TestWriteHeaderReplaces(t *testing.T) {
	tp := hdrTracepoint(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "tp.h")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteHeader(path, tp.Name()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte("struct hdr_event_record")) {
		t.Errorf("tp.h holds %q", b)
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.h")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	err := WriteHeader(link, tp.Name())
	if !errors.Is(err, safefs.ErrUnsafe) || !strings.HasPrefix(err.Error(), "tracepoint header: write "+link+": is a symbolic link") {
		t.Errorf("WriteHeader through a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target now holds %q", b)
	}
}
