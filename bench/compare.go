package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// Options configure Compare. The zero value means the defaults.
type Options struct {
	// Sizes are the policy sizes (default Sizes).
	Sizes []int
	// Count is how many times each benchmark runs; the tables show the
	// median (default 5).
	Count int
	// Benchtime is the testing benchtime of one run, "300ms" or "1000x"
	// (default "300ms").
	Benchtime string
	// NoParallel skips the parallel throughput table.
	NoParallel bool
	// Progress, if set, receives one line per finished round.
	Progress io.Writer
}

// Result is Count runs of one benchmark.
type Result struct {
	// NsPerOp is the median of the runs' ns/op; Spread half their range
	// over the median.
	NsPerOp     float64
	Spread      float64
	AllocsPerOp int64
	// Runs are the runs' ns/op in the order they ran (run i of every
	// benchmark is in round i).
	Runs []float64
}

func (r *Result) add(b testing.BenchmarkResult) {
	r.Runs = append(r.Runs, float64(b.T.Nanoseconds())/float64(b.N))
	ns := slices.Clone(r.Runs)
	slices.Sort(ns)
	r.NsPerOp = median(ns)
	r.Spread = (ns[len(ns)-1] - ns[0]) / 2 / r.NsPerOp
	r.AllocsPerOp = b.AllocsPerOp()
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Ratio is the median over rounds of a's time over b's in the same round.
// Pairing the runs of one round cancels most of the load other processes
// put on the machine, which moves both alike.
func Ratio(a, b *Result) float64 {
	if a == nil || b == nil {
		return 0
	}
	var rs []float64
	for i := 0; i < len(a.Runs) && i < len(b.Runs); i++ {
		if b.Runs[i] > 0 {
			rs = append(rs, a.Runs[i]/b.Runs[i])
		}
	}
	slices.Sort(rs)
	return median(rs)
}

// Key names one benchmark: a size, a case (empty for the parallel
// benchmark) and an engine.
type Key struct {
	Size         int
	Case, Engine string
}

// Report is what Compare measured.
type Report struct {
	Engines  []string
	Sizes    []int
	Results  map[Key]*Result
	Matrix   []MatrixRow
	Variants []string
	CPU      string
	Procs    int
}

// MatrixRow is one spelling and what each engine decided.
type MatrixRow struct {
	Spelling Spelling
	Got      map[string]warden.Effect
}

// Compare builds the workload at each size for warden, OPA and cedar-go,
// benchmarks every case on every engine in this process (the engines of a
// case run back to back, Count rounds), and writes the tables as Markdown.
// The caller must have called testing.Init (go test does).
func Compare(opts Options, w io.Writer) error {
	if len(opts.Sizes) == 0 {
		opts.Sizes = Sizes
	}
	if opts.Count <= 0 {
		opts.Count = 5
	}
	if opts.Benchtime == "" {
		opts.Benchtime = "300ms"
	}
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return errors.New("compare: the testing flags are not registered (call testing.Init first)")
	}
	old := f.Value.String()
	if err := f.Value.Set(opts.Benchtime); err != nil {
		return fmt.Errorf("compare: benchtime: %w", err)
	}
	defer f.Value.Set(old)

	tmp, err := os.MkdirTemp("", "warden-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	rep := &Report{Sizes: opts.Sizes, Results: map[Key]*Result{}, CPU: CPUModel(), Procs: runtime.GOMAXPROCS(0)}
	prepared := map[int][]struct {
		name string
		fs   []func() warden.Effect
	}{}
	for _, n := range opts.Sizes {
		dir, err := os.MkdirTemp(tmp, fmt.Sprint(n, "-"))
		if err != nil {
			return err
		}
		ds, err := Engines(Rules(n), dir)
		if err != nil {
			return fmt.Errorf("rules=%d: %w", n, err)
		}
		rep.Engines = rep.Engines[:0]
		for _, d := range ds {
			fs, err := PrepareAll(d, Cases)
			if err != nil {
				return fmt.Errorf("rules=%d: %w", n, err)
			}
			rep.Engines = append(rep.Engines, d.Name())
			prepared[n] = append(prepared[n], struct {
				name string
				fs   []func() warden.Effect
			}{d.Name(), fs})
		}
	}

	// Round by round, case by case: a case's engines and sizes run back to
	// back, so that the ratios compare runs made under the same load.
	for round := 0; round < opts.Count; round++ {
		start := time.Now()
		for ci, c := range Cases {
			for _, n := range opts.Sizes {
				for _, e := range prepared[n] {
					fn := e.fs[ci]
					res := testing.Benchmark(func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							fn()
						}
					})
					rep.result(Key{n, c.Name, e.name}).add(res)
				}
			}
		}
		for _, n := range opts.Sizes {
			if opts.NoParallel {
				break
			}
			for _, e := range prepared[n] {
				fs := e.fs
				res := testing.Benchmark(func(b *testing.B) {
					b.ReportAllocs()
					b.RunParallel(func(pb *testing.PB) {
						i := 0
						for pb.Next() {
							fs[i%len(fs)]()
							i++
						}
					})
				})
				rep.result(Key{n, "", e.name}).add(res)
			}
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "round %d of %d: %s\n", round+1, opts.Count, time.Since(start).Round(time.Second))
		}
	}

	// Correctness: every spelling through every engine, both peer variants.
	rules := Rules(opts.Sizes[0])
	dir, err := os.MkdirTemp(tmp, "matrix-")
	if err != nil {
		return err
	}
	ms, err := MatrixEngines(rules, dir)
	if err != nil {
		return err
	}
	for _, d := range ms {
		rep.Variants = append(rep.Variants, d.Name())
	}
	rep.Matrix, err = Matrix(ms, append(append([]Spelling{}, Dangerous...), Harmless...))
	if err != nil {
		return err
	}
	rep.Write(w, opts)
	return nil
}

func (rep *Report) result(k Key) *Result {
	r := rep.Results[k]
	if r == nil {
		r = &Result{}
		rep.Results[k] = r
	}
	return r
}

// MatrixEngines are the engines of the correctness matrix: warden, and the
// peers in both variants.
func MatrixEngines(rules []Rule, dir string) ([]Decider, error) {
	ds, err := Engines(rules, dir)
	if err != nil {
		return nil, err
	}
	o, err := NewOPA(rules, Literal)
	if err != nil {
		return nil, err
	}
	c, err := NewCedar(rules, Literal)
	if err != nil {
		return nil, err
	}
	return append(ds, o, c), nil
}

// Matrix decides every spelling, as a builder's Bash call, with every
// engine.
func Matrix(ds []Decider, spellings []Spelling) ([]MatrixRow, error) {
	var rows []MatrixRow
	for _, s := range spellings {
		row := MatrixRow{Spelling: s, Got: map[string]warden.Effect{}}
		for _, d := range ds {
			f, err := d.Prepare(bash("builder", s.Command))
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", d.Name(), s.Command, err)
			}
			row.Got[d.Name()] = f()
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Target is one of issue 5's targets and whether the run met it.
type Target struct {
	Text   string
	Met    bool
	Detail string
}

// Targets checks the run against the targets.
func (rep *Report) Targets() []Target {
	var out []Target
	ratio := func(n int, c, peer string) float64 {
		return Ratio(rep.Results[Key{n, c, peer}], rep.Results[Key{n, c, "warden"}])
	}
	speed := func(text, peer string, min float64, simple bool) {
		t := Target{Text: text, Met: true}
		worst, at := 0.0, ""
		for _, n := range rep.Sizes {
			for _, c := range Cases {
				if c.Simple != simple || !simple && !strings.HasPrefix(c.Name, "compound") {
					continue
				}
				r := ratio(n, c.Name, peer)
				if r < min {
					t.Met = false
				}
				if worst == 0 || r < worst {
					worst, at = r, fmt.Sprintf("%s at %d rules", c.Name, n)
				}
			}
		}
		t.Detail = fmt.Sprintf("lowest %.1fx (%s)", worst, at)
		out = append(out, t)
	}
	speed("warden >= 10x faster than cedar-go on simple-command cases", "cedar", 10, true)
	speed("warden >= 30x faster than OPA on simple-command cases", "opa", 30, true)
	speed("warden faster than cedar-go on compound commands", "cedar", 1, false)

	if len(rep.Sizes) > 1 {
		lo, hi := rep.Sizes[0], rep.Sizes[len(rep.Sizes)-1]
		t := Target{Text: fmt.Sprintf("warden no more than 2x slower from %d to %d rules", lo, hi), Met: true}
		worst, at := 0.0, ""
		for _, c := range Cases {
			a, b := rep.Results[Key{lo, c.Name, "warden"}], rep.Results[Key{hi, c.Name, "warden"}]
			if a == nil || b == nil {
				continue
			}
			r := Ratio(b, a)
			if r > 2 {
				t.Met = false
			}
			if r > worst {
				worst, at = r, c.Name
			}
		}
		t.Detail = fmt.Sprintf("highest %.2fx (%s)", worst, at)
		out = append(out, t)
	}

	t := Target{Text: "warden denies every dangerous spelling", Met: true}
	missed := 0
	for _, row := range rep.Matrix {
		if row.Got["warden"] != row.Spelling.Want {
			t.Met = false
			missed++
		}
	}
	t.Detail = fmt.Sprintf("%d of %d spellings decided as required", len(rep.Matrix)-missed, len(rep.Matrix))
	out = append(out, t)
	return out
}

// Write renders the report as Markdown.
func (rep *Report) Write(w io.Writer, opts Options) {
	fmt.Fprintf(w, "Machine: %s, %d cores (GOMAXPROCS %d), %s %s/%s. Median of %d runs of %s each; ± is half the range. Speed-ups and scaling are medians of per-round ratios (the runs of one round are made back to back).\n\n",
		rep.CPU, runtime.NumCPU(), rep.Procs, runtime.Version(), runtime.GOOS, runtime.GOARCH, opts.Count, opts.Benchtime)

	fmt.Fprintln(w, "### One decision (ns/op, allocs/op; speed-up is the peer's time over warden's)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| rules | case | warden | opa | cedar | warden vs opa | warden vs cedar |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|")
	for _, n := range rep.Sizes {
		for _, c := range Cases {
			wr := rep.Results[Key{n, c.Name, "warden"}]
			cells := []string{}
			for _, e := range []string{"warden", "opa", "cedar"} {
				cells = append(cells, rep.Results[Key{n, c.Name, e}].cell())
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s |\n", n, c.Name, cells[0], cells[1], cells[2],
				speedup(rep.Results[Key{n, c.Name, "opa"}], wr), speedup(rep.Results[Key{n, c.Name, "cedar"}], wr))
		}
	}
	fmt.Fprintln(w)

	if len(rep.Sizes) > 1 {
		lo := rep.Sizes[0]
		fmt.Fprintf(w, "### Scaling (time at each size over time at %d rules)\n\n", lo)
		fmt.Fprint(w, "| case |")
		for _, e := range rep.Engines {
			for _, n := range rep.Sizes[1:] {
				fmt.Fprintf(w, " %s %d |", e, n)
			}
		}
		fmt.Fprint(w, "\n|---|")
		for range rep.Engines {
			for range rep.Sizes[1:] {
				fmt.Fprint(w, "---:|")
			}
		}
		fmt.Fprintln(w)
		for _, c := range Cases {
			fmt.Fprintf(w, "| %s |", c.Name)
			for _, e := range rep.Engines {
				for _, n := range rep.Sizes[1:] {
					a, b := rep.Results[Key{lo, c.Name, e}], rep.Results[Key{n, c.Name, e}]
					if a == nil || b == nil {
						fmt.Fprint(w, " - |")
						continue
					}
					fmt.Fprintf(w, " %.2fx |", Ratio(b, a))
				}
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}

	if rep.Results[Key{rep.Sizes[0], "", "warden"}] != nil {
		fmt.Fprintf(w, "### Throughput on all cores (RunParallel, %d goroutines, cycling through the %d cases)\n\n", rep.Procs, len(Cases))
		fmt.Fprintln(w, "| rules | engine | ns/op | allocs/op | decisions/s | warden's speed-up |")
		fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|")
		for _, n := range rep.Sizes {
			wr := rep.Results[Key{n, "", "warden"}]
			for _, e := range rep.Engines {
				r := rep.Results[Key{n, "", e}]
				su := "-"
				if e != "warden" {
					su = speedup(r, wr)
				}
				fmt.Fprintf(w, "| %d | %s | %s | %d | %s | %s |\n", n, e, nsCell(r), r.AllocsPerOp, perSecond(r.NsPerOp), su)
			}
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "### Correctness: a builder's Bash call, %d rules (DENY in capitals; * = not what warden requires)\n\n", rep.Sizes[0])
	fmt.Fprintln(w, "opa and cedar are the timed policies (deny patterns match anywhere in the line, allow patterns from its start); the -literal variants translate each pattern as written, anchored at the start.")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| command | required |")
	for _, v := range rep.Variants {
		fmt.Fprintf(w, " %s |", v)
	}
	fmt.Fprint(w, "\n|---|---|")
	for range rep.Variants {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	caught := map[string]int{}
	dangerous := 0
	for _, row := range rep.Matrix {
		fmt.Fprintf(w, "| `%s` | %s |", strings.ReplaceAll(row.Spelling.Command, "|", `\|`), row.Spelling.Want)
		if row.Spelling.Want == warden.Deny {
			dangerous++
		}
		for _, v := range rep.Variants {
			g := row.Got[v]
			if g == row.Spelling.Want && g == warden.Deny {
				caught[v]++
			}
			s := string(g)
			if g == warden.Deny {
				s = "DENY"
			}
			if g != row.Spelling.Want {
				s += " *"
			}
			fmt.Fprintf(w, " %s |", s)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| **dangerous spellings denied** | |")
	for _, v := range rep.Variants {
		fmt.Fprintf(w, " **%d/%d** |", caught[v], dangerous)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)

	fmt.Fprintln(w, "### Targets")
	fmt.Fprintln(w)
	for _, t := range rep.Targets() {
		mark := "met"
		if !t.Met {
			mark = "NOT MET"
		}
		fmt.Fprintf(w, "- %s: **%s** (%s)\n", t.Text, mark, t.Detail)
	}
}

func (r *Result) cell() string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%s, %d", nsCell(r), r.AllocsPerOp)
}

func nsCell(r *Result) string {
	return fmt.Sprintf("%s ±%.0f%%", fmtNs(r.NsPerOp), r.Spread*100)
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func speedup(peer, w *Result) string {
	if peer == nil || w == nil || w.NsPerOp == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", Ratio(peer, w))
}

func perSecond(ns float64) string {
	if ns == 0 {
		return "-"
	}
	ps := 1e9 / ns
	switch {
	case ps >= 1e6:
		return fmt.Sprintf("%.2f M", ps/1e6)
	case ps >= 1e3:
		return fmt.Sprintf("%.1f k", ps/1e3)
	}
	return fmt.Sprintf("%.0f", ps)
}

// CPUModel returns the CPU model name from /proc/cpuinfo, or GOARCH.
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
