// Package config loads a command's options, one rule for every simdex
// command (server, bulkload, simdexctl): each option is a flag, and unless
// the command keeps it to the command line (Set.Local) also an environment
// variable SIMDEX_<FLAG> (upper case, '-' as '_') and a key of an optional
// JSON file (--config, or SIMDEX_CONFIG; keys with '_' for '-'). A flag
// wins over the environment, which wins over the file, which wins over the
// default. Every source goes through the flag's own parser, so a value
// means the same wherever it is written, and a bad one gets the same error.
//
// A command declares its flags on Set.Flags, bound to the fields of its
// Config (their defaults the values DefaultConfig put there), then calls
// Parse. --help prints the same layout for every command: the synopsis,
// the command's text, where options may come from, and the flags.
//
// HBase holds the HBase connection flags the commands share.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// ConfigFlag is the flag (and, as SIMDEX_CONFIG, the variable) naming the
// JSON file.
const ConfigFlag = "config"

// EnvPrefix starts every option's environment variable.
const EnvPrefix = "SIMDEX_"

// EnvName is the environment variable of the flag name: SIMDEX_ and the
// name in upper case with '_' for '-' ("data-dir": SIMDEX_DATA_DIR).
func EnvName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// FileKey is the key of the flag name in a config file: the name with '_'
// for '-' ("data-dir": "data_dir"). A file may also spell it with '-'.
func FileKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// Source says where an option's value came from.
type Source int

const (
	// Default: no source set it; it holds the Config's default.
	Default Source = iota
	// File: the JSON config file.
	File
	// Env: its SIMDEX_<FLAG> environment variable.
	Env
	// Flag: the command line.
	Flag
)

func (s Source) String() string {
	switch s {
	case File:
		return "file"
	case Env:
		return "environment"
	case Flag:
		return "flag"
	}
	return "default"
}

// Usage is the text of a command's --help, around its flags.
type Usage struct {
	// Synopsis is one line per form of the command line, without
	// "Usage: " (e.g. "server [flags]").
	Synopsis []string
	// Text says what the command does: paragraphs separated by blank
	// lines, printed as written.
	Text string
	// FileExample is an example config file for --config's help, e.g.
	// `{"data_dir": "/var/lib/simdex"}` (empty: none).
	FileExample string
}

// A Set is one command's options and where each came from. Declare the
// flags on Flags, then Parse once.
type Set struct {
	name    string
	err     error
	out     io.Writer
	usage   Usage
	fs      *flag.FlagSet
	local   map[string]bool
	sources map[string]Source
	args    []string
	file    string
	parsed  bool
}

// NewSet returns the options of the command name ("server", "simdexctl
// seen"). Every error Parse returns wraps errConfig, except flag.ErrHelp
// after --help (the usage written to out).
func NewSet(name string, errConfig error, out io.Writer, u Usage) *Set {
	s := &Set{name: name, err: errConfig, out: out, usage: u, local: map[string]bool{}, sources: map[string]Source{}}
	s.fs = flag.NewFlagSet(name, flag.ContinueOnError)
	s.fs.SetOutput(out)
	s.fs.Usage = func() { s.PrintUsage() }
	return s
}

// Flags is the flag set to declare the options on (StringVar, IntVar,
// Func, ...), each bound to its Config field with the field's value as
// default.
func (s *Set) Flags() *flag.FlagSet { return s.fs }

// Local keeps the named flags to the command line: no environment
// variable, no file key (for what one run says, such as a file to read or
// a confirmation, rather than a setting of the installation).
func (s *Set) Local(names ...string) {
	for _, n := range names {
		if s.fs.Lookup(n) == nil {
			panic("config: Local of undeclared flag " + n)
		}
		s.local[n] = true
	}
}

// settings are the flags the environment and the file may set, in
// lexical order; --config is not one.
func (s *Set) settings() []*flag.Flag {
	var out []*flag.Flag
	s.fs.VisitAll(func(f *flag.Flag) {
		if f.Name != ConfigFlag && !s.local[f.Name] {
			out = append(out, f)
		}
	})
	return out
}

// declareConfig declares --config when some flag is a setting.
func (s *Set) declareConfig() {
	if s.fs.Lookup(ConfigFlag) != nil || len(s.settings()) == 0 {
		return
	}
	usage := "optional JSON file with any of the options below, keys with '_' for '-'"
	switch settings := s.settings(); {
	case len(settings) == s.countFlags():
	case len(settings) == 1:
		usage = "optional JSON file with " + flagList(settings, "") + ", keys with '_' for '-'"
	default:
		usage = "optional JSON file with any of " + flagList(settings, "or") + ", keys with '_' for '-'"
	}
	if s.usage.FileExample != "" {
		usage += " (e.g. " + s.usage.FileExample + ")"
	}
	s.fs.StringVar(&s.file, ConfigFlag, "", usage)
}

// countFlags counts the declared flags but --config.
func (s *Set) countFlags() int {
	n := 0
	s.fs.VisitAll(func(f *flag.Flag) {
		if f.Name != ConfigFlag {
			n++
		}
	})
	return n
}

// Parse sets the options from args (flags, and positional arguments
// anywhere among them: Args), then from getenv (SIMDEX_<FLAG>, empty
// meaning unset) each setting not given as a flag, then from the config
// file each setting neither gave. The file is --config, else
// SIMDEX_CONFIG; an explicit empty --config reads none. A bad value in
// any source is an error wrapping the Set's error; all bad values in the
// environment and the file are reported together.
func (s *Set) Parse(args []string, getenv func(string) string) error {
	if s.parsed {
		panic("config: Parse called twice")
	}
	s.parsed = true
	if getenv == nil {
		getenv = os.Getenv
	}
	s.declareConfig()
	if err := s.parseArgs(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", s.err, err)
	}
	s.fs.Visit(func(f *flag.Flag) { s.sources[f.Name] = Flag })
	if s.fs.Lookup(ConfigFlag) == nil {
		return nil
	}
	if s.sources[ConfigFlag] != Flag {
		if v := getenv(EnvName(ConfigFlag)); v != "" {
			s.file = v
			s.sources[ConfigFlag] = Env
		}
	}
	values, err := s.readFile()
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range s.settings() {
		if s.sources[f.Name] == Flag {
			continue
		}
		env := EnvName(f.Name)
		if v := getenv(env); v != "" {
			errs = append(errs, s.set(f, v, Env, env))
			continue
		}
		if v, ok := values[f.Name]; ok {
			errs = append(errs, s.set(f, v, File, fmt.Sprintf("%q in config file %s", FileKey(f.Name), s.file)))
		}
	}
	return errors.Join(errs...)
}

// set sets f to v from src; where names the source in an error.
func (s *Set) set(f *flag.Flag, v string, src Source, where string) error {
	if err := f.Value.Set(v); err != nil {
		return s.badValue(v, where, err)
	}
	s.sources[f.Name] = src
	return nil
}

// badValue is the error of every bad value, worded as the flag package
// words one on the command line ("invalid value %q for flag -%s: %v").
func (s *Set) badValue(v, where string, err error) error {
	return fmt.Errorf("%w: invalid value %q for %s: %v", s.err, v, where, err)
}

// parseArgs parses args, taking positional arguments anywhere among the
// flags; after "--" every argument is positional.
func (s *Set) parseArgs(args []string) error {
	for {
		if err := s.fs.Parse(args); err != nil {
			return err
		}
		rest := s.fs.Args()
		if len(rest) == 0 {
			return nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			s.args = append(s.args, rest...)
			return nil
		}
		s.args = append(s.args, rest[0])
		args = rest[1:]
	}
}

// readFile reads the config file, if one is named, into flag name ->
// value, refusing a key that is not a setting of this command.
func (s *Set) readFile() (map[string]string, error) {
	if s.file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.file)
	if err != nil {
		return nil, fmt.Errorf("%w: config file: %w", s.err, err)
	}
	entries, err := DecodeFile(b)
	if err != nil {
		return nil, fmt.Errorf("%w: config file %s: %w", s.err, s.file, err)
	}
	values := make(map[string]string, len(entries))
	for _, e := range entries {
		f := s.fs.Lookup(e.Name)
		switch {
		case f == nil || e.Name == ConfigFlag:
			return nil, fmt.Errorf("%w: config file %s: unknown option %q", s.err, s.file, e.Key)
		case s.local[e.Name]:
			return nil, fmt.Errorf("%w: config file %s: option %q is given on the command line only (-%s)", s.err, s.file, e.Key, e.Name)
		}
		values[e.Name] = e.Value
	}
	return values, nil
}

// Args are the positional arguments, in order.
func (s *Set) Args() []string { return s.args }

// Source says where the named option's value came from.
func (s *Set) Source(name string) Source { return s.sources[name] }

// ConfigFile is the config file Parse read ("" for none).
func (s *Set) ConfigFile() string { return s.file }
