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

func runDistance(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "distance")
	titleA := fs.String("title-a", "", "title of document A")
	titleB := fs.String("title-b", "", "title of document B")
	top := fs.Int("top", 15, "how many differing features to list (0: all)")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: want two files", ErrUsage)
	}
	if *top < 0 {
		return fmt.Errorf("%w: --top must be >= 0", ErrUsage)
	}
	a, err := readInput(env, pos[0])
	if err != nil {
		return err
	}
	b, err := readInput(env, pos[1])
	if err != nil {
		return err
	}
	f, err := env.fingerprinter()
	if err != nil {
		return err
	}
	c, err := f.Compare(fingerprint.Document{Title: *titleA, Body: a}, fingerprint.Document{Title: *titleB, Body: b}, *top)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(c)
	}
	fmt.Fprintf(env.Stdout, "distance %d (A %s, B %s)\n", c.Distance, c.A.Simhash, c.B.Simhash)
	if *titleA != "" || *titleB != "" {
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
