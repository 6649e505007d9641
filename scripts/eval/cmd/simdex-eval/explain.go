package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/scripts/eval/pairs"
)

// cmdExplain prints, for pairs of one kind (or one pair id), why their
// fingerprints are far apart: the distance and the features whose weights
// differ most, from fingerprint.Compare with the default recipe.
func cmdExplain(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	in := fs.String("pairs", "", "pairs JSON Lines (required)")
	kind := fs.String("kind", "", "explain pairs of this kind")
	id := fs.String("id", "", "explain this pair")
	bucket := fs.String("bucket", "", "only pairs of this length bucket")
	n := fs.Int("n", 3, "most pairs to explain")
	top := fs.Int("top", 12, "features listed per pair")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || (*kind == "" && *id == "") {
		return fmt.Errorf("explain: -pairs and -kind or -id are required")
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	ps, err := pairs.Read(f)
	f.Close()
	if err != nil {
		return err
	}
	fp, err := fingerprint.New(fingerprint.DefaultConfig())
	if err != nil {
		return err
	}
	shown := 0
	for _, p := range ps {
		if shown >= *n || ctx.Err() != nil {
			break
		}
		if (*id != "" && p.ID != *id) || (*kind != "" && p.Kind != *kind) || (*bucket != "" && p.Bucket != *bucket) {
			continue
		}
		shown++
		a := fingerprint.Document{Title: p.Original.Title, Body: p.Original.Body}
		b := fingerprint.Document{Title: p.Query.Title, Body: p.Query.Body}
		c, err := fp.Compare(a, b, *top)
		fmt.Printf("== %s (%s, %s/%s, size %.3f, %s)\n", p.ID, p.Kind, p.Lang, p.Bucket, p.Size, p.Detail)
		if err != nil {
			fmt.Printf("   error: %v\n", err)
			continue
		}
		fmt.Printf("   distance %d, title distance %d, same exact %v, features %d vs %d\n", c.Distance, c.TitleDistance, c.SameExact, c.A.Features, c.B.Features)
		var ds []string
		for _, d := range c.Differences {
			ds = append(ds, fmt.Sprintf("%q %.2f→%.2f", d.Text, d.WeightA, d.WeightB))
		}
		fmt.Printf("   top differences: %s\n", strings.Join(ds, ", "))
		var wa, wdiff float64
		_, all, _ := fp.Features(a)
		for _, ft := range all {
			wa += ft.Weight
		}
		cAll, _ := fp.Compare(a, b, 0)
		for _, d := range cAll.Differences {
			wdiff += math.Abs(d.WeightA - d.WeightB)
		}
		fmt.Printf("   changed weight: %.1f of the original's %.1f (%.0f%%)\n", wdiff, wa, 100*wdiff/math.Max(wa, 1e-9))
	}
	if shown == 0 {
		return fmt.Errorf("explain: no matching pair")
	}
	return nil
}
