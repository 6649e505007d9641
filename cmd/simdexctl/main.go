// Command simdexctl is the simdex admin command: fingerprint documents,
// compare them, and (as verbs are added) manage schema, compaction and
// layouts. Run it without arguments for the verb list; the verbs live in
// internal/ctl.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/simdex/simdex/internal/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := ctl.Run(ctx, &ctl.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}
