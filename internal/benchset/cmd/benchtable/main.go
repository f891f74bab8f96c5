// Command benchtable times the benchmark set (package benchset) on every
// uebpf engine, as native C (the same C source compiled by clang-19 -O2
// with native/driver.c) and as native Go (benchset's Native functions),
// in one interleaved run, and prints a Markdown table with ratios to
// native C and their geometric means: the table of BENCHMARKS.md.
//
//	go run ./internal/benchset/cmd/benchtable [-rounds 5] [-only NAME,...]
//
// Each figure is the median over the rounds of the thread's CPU time per
// run, a round being as many runs as take about 100 ms; the rounds go
// through every variant of a program in turn, so that a machine's noise
// falls on all of them alike. Every round of every variant runs in a
// process of its own (this command again, with -child), as native C's
// do: on AMD Zen 4, a loop of calls of a few nanoseconds each settled at
// 1.4 ns in one process and 2.5 ns in another, or after other variants
// had run, with the same code at the same addresses. Without clang-19
// the native C column says why it is empty.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/internal/bpfbuild"
	"github.com/uebpf/uebpf/jit"
)

func main() {
	rounds := flag.Int("rounds", 5, "rounds per variant (the median is reported)")
	only := flag.String("only", "", "comma-separated benchmark `names` (default: every one with a C source)")
	child := flag.Int("child", -1, "internal: time one round of the variant with this `index` of the benchmark named by -only, in this process")
	flag.Parse()
	if *child >= 0 {
		if err := runChild(os.Stdout, *only, *child); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*rounds, *only); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// variant is one way of running a program: a column of the table.
type variant struct {
	name string
	run  func(rounds int) ([]float64, uint64, error) // ns per run for each round, the result
}

var columns = []string{"interpreter", "JIT checked", "JIT unchecked", "native C", "native Go"}

func run(rounds int, only string) error {
	root, err := bpfbuild.ModuleRoot(".")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "benchtable-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	clang, clangErr := exec.LookPath(bpfbuild.Clang)
	if !jit.Supported {
		return fmt.Errorf("%w: the table compares the JIT", jit.ErrUnsupportedArch)
	}

	fmt.Printf("%s, %s/%s, %d rounds, medians of CPU time per run\n\n", cpuName(), runtime.GOOS, runtime.GOARCH, rounds)
	fmt.Println("| program | interpreter | JIT checked | JIT unchecked | native C | native Go | interpreter / C | JIT checked / C | JIT unchecked / C | native Go / C |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	logRatios := make([][]float64, 4)
	var notes []string
	for _, bm := range benchset.Set {
		src := filepath.Join(root, "internal/benchset/c", bm.Object+".bpf.c")
		if strings.HasPrefix(bm.Name, "map_") || (only != "" && !slices.Contains(strings.Split(only, ","), bm.Name)) {
			continue // the map programs call helpers: no native C of them
		}
		var vs []*variant
		for i := range goVariants {
			vs = append(vs, inChild(bm, i))
		}
		var native *variant
		if clangErr == nil {
			bin, err := buildNative(clang, root, tmp, bm, src)
			if err != nil {
				return err
			}
			native = nativeC(bin, tmp, bm)
		}
		times := make([][]float64, len(columns))
		results := make([]uint64, len(columns))
		for range rounds { // interleaved: one round of each variant in turn
			for i, v := range append(vs[:3:3], native, vs[3]) {
				if v == nil {
					continue
				}
				ns, r, err := v.run(1)
				if err != nil {
					return fmt.Errorf("%s %s: %w", bm.Name, v.name, err)
				}
				times[i], results[i] = append(times[i], ns...), r
			}
		}
		med := make([]float64, len(columns))
		for i := range columns {
			if len(times[i]) > 0 {
				med[i] = median(times[i])
				if results[i] != bm.Want {
					notes = append(notes, fmt.Sprintf("%s: %s returned %d, want %d", bm.Name, columns[i], results[i], bm.Want))
				}
			}
		}
		row := []string{bm.Name}
		for _, m := range med {
			row = append(row, nsText(m))
		}
		for i, col := range []int{0, 1, 2, 4} {
			if med[3] == 0 {
				row = append(row, "")
				continue
			}
			r := med[col] / med[3]
			logRatios[i] = append(logRatios[i], math.Log(r))
			row = append(row, fmt.Sprintf("%.2f", r))
		}
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
	geo := []string{"**geomean**", "", "", "", "", ""}
	for _, l := range logRatios {
		if len(l) == 0 {
			geo = append(geo, "")
			continue
		}
		var sum float64
		for _, x := range l {
			sum += x
		}
		geo = append(geo, fmt.Sprintf("**%.2f**", math.Exp(sum/float64(len(l)))))
	}
	fmt.Println("| " + strings.Join(geo, " | ") + " |")
	if clangErr != nil {
		fmt.Printf("\nno native C column: %v (install clang-19)\n", clangErr)
	}
	if len(notes) > 0 {
		return errors.New("wrong results:\n" + strings.Join(notes, "\n"))
	}
	return nil
}

// goVariants are the columns timed in Go, in the table's order: each
// round of each in a child process (inChild, runChild).
var goVariants = []struct {
	name   string
	engine uebpf.Engine
	skip   bool // SkipVerification: the JIT checks every access
	native bool // benchset's Native function
}{
	{name: "interpreter", engine: uebpf.EngineInterpreter},
	{name: "JIT checked", engine: uebpf.EngineJIT, skip: true},
	{name: "JIT unchecked", engine: uebpf.EngineJIT},
	{name: "native Go", native: true},
}

// inChild is goVariants[i] of bm, each round of it timed by a child
// process (runChild).
func inChild(bm *benchset.Benchmark, i int) *variant {
	return &variant{goVariants[i].name, func(rounds int) ([]float64, uint64, error) {
		var ns []float64
		var result uint64
		for range rounds {
			cmd := exec.Command(os.Args[0], "-only", bm.Name, "-child", strconv.Itoa(i))
			cmd.Stderr = os.Stderr
			round, r, err := timed(cmd)
			if err != nil {
				return nil, 0, err
			}
			ns, result = append(ns, round...), r
		}
		return ns, result, nil
	}}
}

// runChild times one round of goVariants[i] of the benchmark named, and
// prints its result and time to w as native C's driver does.
func runChild(w io.Writer, name string, i int) error {
	if i >= len(goVariants) {
		return fmt.Errorf("no variant %d", i)
	}
	for _, bm := range benchset.Set {
		if bm.Name == name {
			ns, r, err := timeVariant(bm, i)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "result %d\nns %.3f\n", r, ns)
			return nil
		}
	}
	return fmt.Errorf("no benchmark %q", name)
}

// timeVariant times one round of goVariants[i] of bm, and returns the
// time per run and the result.
func timeVariant(bm *benchset.Benchmark, i int) (float64, uint64, error) {
	v, ctx := goVariants[i], bm.Input()
	if v.native {
		ns := timeRounds(1, func(n int) { callNative(bm.Native, ctx, n) })
		return ns[0], bm.Native(ctx), nil
	}
	load := func() (*uebpf.Collection, *uebpf.Program, error) { return bm.Load(v.engine) }
	if v.skip {
		load = bm.LoadUnverified
	}
	coll, p, err := load()
	if err != nil {
		return 0, 0, err
	}
	defer coll.Close()
	run := p.Func() // Run, or the direct entry of a flat program's code
	ns := timeRounds(1, func(n int) { callProgram(run, ctx, n) })
	r0, err := run(ctx)
	return ns[0], r0, err
}

// callProgram and callNative are the timed loops: n calls of a func value
// with the context, results dropped, as native C's driver loops. Each is
// a function of its own, so that the loop's code is the same whatever is
// around it in the binary: a loop inside a closure that stored the
// results ran some programs 0.8 ns slower per call in one build than in
// the next.
//
//go:noinline
func callProgram(run func([]byte) (uint64, error), ctx []byte, n int) {
	for range n {
		run(ctx)
	}
}

//go:noinline
func callNative(f func([]byte) uint64, ctx []byte, n int) {
	for range n {
		f(ctx)
	}
}

// timeRounds runs f(n) for rounds rounds with n calibrated to about
// 100 ms of CPU, and returns the CPU time per call of each.
func timeRounds(rounds int, f func(n int)) []float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 1
	for {
		t := cpuTime(f, n)
		if t > 1e8 || n > 1<<40 {
			break
		}
		if t < 1e6 {
			n *= 100
		} else {
			n = int(float64(n) * 1.2e8 / t)
		}
	}
	ns := make([]float64, rounds)
	for i := range ns {
		ns[i] = cpuTime(f, n) / float64(n)
	}
	return ns
}

func cpuTime(f func(int), n int) float64 {
	c0 := threadCPU()
	f(n)
	return float64(threadCPU() - c0)
}

func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}

// buildNative compiles bm's C source with the driver into a native
// executable.
func buildNative(clang, root, tmp string, bm *benchset.Benchmark, src string) (string, error) {
	code, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^(\S+)\s+` + regexp.QuoteMeta(bm.Program) + `\(`).FindSubmatch(code)
	if m == nil {
		return "", fmt.Errorf("%s: no definition of %s", src, bm.Program)
	}
	bin := filepath.Join(tmp, bm.Name)
	cmd := exec.Command(clang, "-O2", "-DBENCH_FN="+bm.Program, "-DBENCH_RET="+string(m[1]),
		"-I", filepath.Join(root, "examples/include"),
		filepath.Join(root, "internal/benchset/native/driver.c"), src, "-o", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return bin, nil
}

// nativeC runs the native executable, one process per round.
func nativeC(bin, tmp string, bm *benchset.Benchmark) *variant {
	input := filepath.Join(tmp, bm.Name+".input")
	return &variant{"native C", func(rounds int) ([]float64, uint64, error) {
		if err := os.WriteFile(input, bm.Input(), 0o644); err != nil {
			return nil, 0, err
		}
		return timed(exec.Command(bin, input, strconv.Itoa(rounds)))
	}}
}

// timed runs cmd, which prints "result R" and "ns X" for each round, and
// returns the rounds' times and the result.
func timed(cmd *exec.Cmd) ([]float64, uint64, error) {
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	ns, result, err := parseTimes(out)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return ns, result, nil
}

// parseTimes reads what timed's commands print.
func parseTimes(out []byte) ([]float64, uint64, error) {
	var ns []float64
	var result uint64
	var err error
	for l := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch k {
		case "result":
			result, err = strconv.ParseUint(v, 10, 64)
		case "ns":
			var x float64
			x, err = strconv.ParseFloat(v, 64)
			ns = append(ns, x)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%q: %w", l, err)
		}
	}
	if len(ns) == 0 {
		return nil, 0, fmt.Errorf("no time in %q", out)
	}
	return ns, result, nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

func nsText(ns float64) string {
	switch {
	case ns == 0:
		return ""
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

// cpuName is the processor's model, from /proc/cpuinfo where there is one.
func cpuName() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v) + fmt.Sprintf(" (%d CPUs)", runtime.NumCPU())
			}
		}
	}
	return runtime.GOARCH
}
