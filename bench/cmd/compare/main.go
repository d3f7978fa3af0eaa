// Command compare measures warden beside OPA and cedar-go on the benchmark
// workload in one process run and prints the tables as Markdown:
//
//	cd bench && go run ./cmd/compare [-count 5] [-benchtime 300ms] [-sizes 20,200,2000]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/warden-run/warden/bench"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	testing.Init() // testing.Benchmark reads the testing flags
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 5, "runs of each benchmark; the tables show the median")
	benchtime := fs.String("benchtime", "300ms", "duration (300ms) or iterations (1000x) of one run")
	sizes := fs.String("sizes", "20,200,2000", "policy sizes in rules, comma-separated")
	noParallel := fs.Bool("no-parallel", false, "skip the parallel throughput benchmark")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts := bench.Options{Count: *count, Benchtime: *benchtime, NoParallel: *noParallel, Progress: stderr}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < bench.BaseRules {
			fmt.Fprintf(stderr, "compare: -sizes: %q is not a size of at least %d rules\n", s, bench.BaseRules)
			return 2
		}
		opts.Sizes = append(opts.Sizes, n)
	}
	if err := bench.Compare(opts, stdout); err != nil {
		fmt.Fprintln(stderr, "compare:", err)
		return 1
	}
	return 0
}
