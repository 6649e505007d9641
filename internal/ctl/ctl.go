// Package ctl implements the verbs of simdexctl, the simdex admin command.
// cmd/simdexctl only calls Run; each verb is a Verb in the table returned by
// Verbs, so adding one means adding an entry (and its file) here.
//
// A verb parses its arguments into its own config (a struct with its
// defaults and a Validate method) through internal/config, as the other
// commands do: the store settings (--data-dir, --hbase-zk,
// --hbase-namespace) may also come from SIMDEX_* variables and a --config
// file; a verb's other flags say what one run does and are given on the
// command line only.
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
	"github.com/simdex/simdex/internal/config"
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
	// Getenv reads the SIMDEX_* variables (default os.Getenv).
	Getenv func(string) string

	verb Verb // the verb running, set by Run
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
		upgradeVerb,
		writerLeaseVerb,
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
		venv := *env
		venv.verb = v
		err := v.Run(ctx, &venv, args[1:])
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

// settings are the flags of simdexctl that the environment and a config
// file may set (those of the store); every other flag of a verb is local
// to its command line.
var settings = func() map[string]bool {
	m := map[string]bool{"data-dir": true, "hbase-zk": true, "hbase-namespace": true}
	for _, name := range config.HBaseSecurityFlags {
		m[name] = true
	}
	return m
}()

// Examples of config files for --config's help.
const (
	dataDirExample = `{"data_dir": "/var/lib/simdex"}`
	hbaseExample   = `{"hbase_zk": "zk1:2181,zk2:2181", "hbase_namespace": "simdex"}`
)

// newSet returns the option set of the running verb, its --help made of the
// verb's usage line and summary, and fileExample (for a verb with store
// settings). Declare the verb's flags on its Flags, then call parse.
func newSet(env *Env, fileExample string) *config.Set {
	v := env.verb
	return config.NewSet("simdexctl "+v.Name, ErrUsage, env.Stderr, config.Usage{
		Synopsis:    []string{"simdexctl " + v.Name + " " + v.Usage},
		Text:        config.Wrap(v.Summary, 79),
		FileExample: fileExample,
	})
}

// parse parses args (flags anywhere among the positional arguments, which
// it returns) and the store settings' SIMDEX_* variables and config file.
func parse(env *Env, s *config.Set, args []string) ([]string, error) {
	s.Flags().VisitAll(func(f *flag.Flag) {
		if !settings[f.Name] {
			s.Local(f.Name)
		}
	})
	if err := s.Parse(args, env.Getenv); err != nil { // nil: os.Getenv
		return nil, err
	}
	return s.Args(), nil
}
