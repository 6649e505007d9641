// Package cmdmain is the main function of the benchmark tools whose body is
// a Run(ctx, args) in scripts/bench/internal: their own commands and the
// subcommands of scripts/bench/cmd/bench.
package cmdmain

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
)

// Main runs run with the process's arguments after the first skip ones
// (the command name, and for bench the subcommand's) and exits: 0 when it
// succeeds or its flags were asked for help, 1 with "name: error" on
// stderr otherwise. The context is cancelled on an interrupt.
func Main(name string, skip int, run func(ctx context.Context, args []string) error) {
	selfArgs = slices.Clone(os.Args[1:skip])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[skip:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// selfArgs are the arguments before the tool's own (Main's skip).
var selfArgs []string

// SelfArgs returns the arguments that run this tool again when passed
// before its own flags to os.Executable(): none for a tool's command,
// the subcommand for bench. A tool that starts itself as a child (seen's
// REST server) uses it.
func SelfArgs() []string { return slices.Clone(selfArgs) }
