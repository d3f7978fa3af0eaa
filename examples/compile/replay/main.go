// Command replay serves recorded model answers over the OpenAI chat
// completions wire, one answer per request in the order given, so that
// warden compile can be tried without a model:
//
//	go run ./examples/compile/replay examples/compile/mail/answers/*.json
//
// It prints the base URL to pass as --base-url and serves until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/warden-run/warden/internal/scripted"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8087", "address to listen on")
	repeat := flag.Int("repeat", 20, "serve the answers this many times over, so that compile can run again")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: replay [--addr HOST:PORT] ANSWER.json...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(1)
	}
	var turns []scripted.Turn
	for _, f := range flag.Args() {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "replay: %v\n", err)
			os.Exit(1)
		}
		turns = append(turns, scripted.Turn{Name: filepath.Base(f), Text: string(data)})
	}
	one := turns
	for i := 1; i < *repeat; i++ {
		turns = append(turns, one...)
	}
	srv, err := scripted.Listen(*addr, turns...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "replay: %v\n", err)
		os.Exit(1)
	}
	srv.Fallback = "the recorded answers are used up"
	srv.CountPromptTokens = true
	fmt.Printf("serving %d recorded answers at %s/v1 (Ctrl-C stops)\n", len(one), srv.URL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	<-ctx.Done()
	srv.Close()
}
