package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/simdex/simdex/fingerprint"
)

var distanceVerb = Verb{
	Name:    "distance",
	Usage:   "[--title-a T] [--title-b T] [--top N] [--json] FILE_A FILE_B",
	Summary: "fingerprint two files; print their Hamming distance and the features that differ most",
	Run:     runDistance,
}

// distanceConfig is the distance verb's configuration.
type distanceConfig struct {
	TitleA, TitleB string
	// Top is how many differing features to list (0: all).
	Top int
	// JSON prints JSON instead of text.
	JSON bool
	// Files are the two documents' files ("-" for stdin).
	Files []string
}

func defaultDistanceConfig() distanceConfig { return distanceConfig{Top: 15} }

// Validate reports what is wrong with c (wrapping ErrUsage).
func (c distanceConfig) Validate() error {
	if len(c.Files) != 2 {
		return fmt.Errorf("%w: want two files", ErrUsage)
	}
	if c.Top < 0 {
		return fmt.Errorf("%w: --top must be >= 0", ErrUsage)
	}
	return nil
}

// parseDistance parses the verb's arguments.
func parseDistance(env *Env, args []string) (distanceConfig, error) {
	c := defaultDistanceConfig()
	s := newSet(env, "")
	fs := s.Flags()
	fs.StringVar(&c.TitleA, "title-a", c.TitleA, "title of document A")
	fs.StringVar(&c.TitleB, "title-b", c.TitleB, "title of document B")
	fs.IntVar(&c.Top, "top", c.Top, "how many differing features to list (0: all)")
	fs.BoolVar(&c.JSON, "json", c.JSON, "print JSON instead of text")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	c.Files = pos
	return c, c.Validate()
}

func runDistance(ctx context.Context, env *Env, args []string) error {
	cfg, err := parseDistance(env, args)
	if err != nil {
		return err
	}
	a, err := readInput(env, cfg.Files[0])
	if err != nil {
		return err
	}
	b, err := readInput(env, cfg.Files[1])
	if err != nil {
		return err
	}
	f, err := env.fingerprinter()
	if err != nil {
		return err
	}
	c, err := f.Compare(fingerprint.Document{Title: cfg.TitleA, Body: a}, fingerprint.Document{Title: cfg.TitleB, Body: b}, cfg.Top)
	if err != nil {
		return err
	}
	if cfg.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(c)
	}
	fmt.Fprintf(env.Stdout, "distance %d (A %s, B %s)\n", c.Distance, c.A.Simhash, c.B.Simhash)
	if cfg.TitleA != "" || cfg.TitleB != "" {
		fmt.Fprintf(env.Stdout, "title distance %d (A %s, B %s)\n", c.TitleDistance, c.A.TitleSimhash, c.B.TitleSimhash)
	}
	fmt.Fprintf(env.Stdout, "exact duplicate: %v\nfeatures: A %d, B %d\n", c.SameExact, c.A.Features, c.B.Features)
	if len(c.Differences) == 0 {
		return nil
	}
	fmt.Fprintln(env.Stdout, "\nfeatures that differ most:")
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WEIGHT A\tWEIGHT B\tFEATURE")
	for _, d := range c.Differences {
		// The feature goes last: tabwriter cannot measure CJK widths.
		fmt.Fprintf(tw, "%.3f\t%.3f\t%s\n", d.WeightA, d.WeightB, d.Text)
	}
	return tw.Flush()
}
