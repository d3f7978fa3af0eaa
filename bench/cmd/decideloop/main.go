// Command decideloop runs warden's decision of one bench case n times and
// nothing else, for counting the instructions a decision takes under a
// tool such as valgrind's cachegrind, a measure the load of other
// processes on a shared machine does not disturb:
//
//	go build -o /tmp/dl ./cmd/decideloop
//	valgrind --tool=cachegrind --cache-sim=no /tmp/dl -case allow -n 0
//	valgrind --tool=cachegrind --cache-sim=no /tmp/dl -case allow -n 20000
//
// The difference of the two "I refs" counts over n is the instructions
// of one decision.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/warden-run/warden/bench"
)

func main() {
	name := flag.String("case", "allow", "the bench case to decide")
	n := flag.Int("n", 10000, "how many times")
	rules := flag.Int("rules", 20, "the workload's size")
	flag.Parse()
	if err := run(*name, *n, *rules); err != nil {
		fmt.Fprintln(os.Stderr, "decideloop:", err)
		os.Exit(1)
	}
}

func run(name string, n, rules int) error {
	dir, err := os.MkdirTemp("", "decideloop")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := bench.NewWarden(bench.Rules(rules), dir)
	if err != nil {
		return err
	}
	for _, c := range bench.Cases {
		if c.Name != name {
			continue
		}
		fs, err := bench.PrepareAll(w, []bench.Case{c})
		if err != nil {
			return err
		}
		f := fs[0]
		// The view does not remember what it read within its clock step
		// of a change (the folder was just made): wait that out, then the
		// first decision fills it.
		time.Sleep(300 * time.Millisecond)
		f()
		for range n {
			f()
		}
		return nil
	}
	return fmt.Errorf("no case %q", name)
}
