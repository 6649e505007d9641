// Package ctl implements the verbs of simdexctl, the simdex admin command.
// cmd/simdexctl only calls Run; each verb is a Verb in the table returned by
// Verbs, so adding one means adding an entry (and its file) here.
package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/simdex/simdex/fingerprint"
)

// ErrUsage marks a command-line mistake (exit status 2).
var ErrUsage = errors.New("ctl: usage")

// Env is what a verb runs with: its streams and how to build the shared
// parts. Tests inject their own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// NewFingerprinter builds the Fingerprinter (default: the package
	// default config). Called at most once per verb run.
	NewFingerprinter func() (*fingerprint.Fingerprinter, error)
}

func (e *Env) fingerprinter() (*fingerprint.Fingerprinter, error) {
	if e.NewFingerprinter != nil {
		return e.NewFingerprinter()
	}
	return fingerprint.New(fingerprint.DefaultConfig())
}

// Verb is one simdexctl sub-command.
type Verb struct {
	Name    string
	Usage   string // arguments, e.g. "[--title T] [FILE|-]"
	Summary string // one line for the verb list
	// Run executes the verb with the arguments after its name. Errors
	// wrapping ErrUsage exit with status 2, others with 1.
	Run func(ctx context.Context, env *Env, args []string) error
}

// Verbs returns every verb, sorted by name.
func Verbs() []Verb {
	v := []Verb{
		fingerprintVerb,
		distanceVerb,
		compactVerb,
		schemaVerb,
		seenVerb,
	}
	slices.SortFunc(v, func(a, b Verb) int { return strings.Compare(a.Name, b.Name) })
	return v
}

// Run dispatches args (without the program name) to a verb and returns the
// process exit status.
func Run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, v := range Verbs() {
		if v.Name != args[0] {
			continue
		}
		err := v.Run(ctx, env, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, ErrUsage):
			fmt.Fprintf(env.Stderr, "simdexctl %s: %v\nusage: simdexctl %s %s\n", v.Name, err, v.Name, v.Usage)
			return 2
		default:
			fmt.Fprintf(env.Stderr, "simdexctl %s: %v\n", v.Name, err)
			return 1
		}
	}
	fmt.Fprintf(env.Stderr, "simdexctl: unknown verb %q\n", args[0])
	usage(env.Stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: simdexctl VERB [ARGS]\n\nverbs:")
	for _, v := range Verbs() {
		fmt.Fprintf(w, "  %-12s %s\n  %-12s   simdexctl %s %s\n", v.Name, v.Summary, "", v.Name, v.Usage)
	}
}

// newFlagSet returns a flag set whose errors are returned, not printed and
// exited on.
func newFlagSet(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// parseFlags parses args, allowing flags after positional arguments too.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
