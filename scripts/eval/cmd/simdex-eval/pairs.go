package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/pairs"
)

func cmdPairs(ctx context.Context, log *slog.Logger, args []string) error {
	def := pairs.DefaultConfig()
	fs := flag.NewFlagSet("pairs", flag.ContinueOnError)
	in := fs.String("corpus", "", "corpus JSON Lines from `simdex-eval corpus` (required)")
	out := fs.String("out", "", "output pairs JSON Lines (required)")
	seed := fs.Uint64("seed", def.Seed, "random seed (documents, templates, edits)")
	split := fs.String("split", def.Split, "documents: all, dev (70% by id hash) or test (the other 30%)")
	kinds := fs.String("kinds", "", "comma-separated pair kinds to make (default all): "+strings.Join(pairs.Kinds(), ","))
	perCell := fs.Int("per-cell", def.PerCell, "most originals per source/language/length cell")
	pos := fs.Int("positives", def.Positives, "positive pairs per original")
	neg := fs.Int("negatives", def.Negatives, "negative pairs per original")
	whole := fs.String("whole", "", "also write the whole-corpus additions (every other stored document and the never-stored probes) as JSON Lines here")
	probes := fs.Int("probes-per-cell", 100, "never-stored documents probed per source/language/length cell")
	quoted := fs.Int("quoted", 200, "never-stored documents quoting a stored quotation, per language")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return fmt.Errorf("pairs: -corpus and -out are required")
	}
	cfg := def
	cfg.Seed, cfg.Split, cfg.PerCell, cfg.Positives, cfg.Negatives = *seed, *split, *perCell, *pos, *neg
	if *kinds != "" {
		cfg.Kinds = strings.Split(*kinds, ",")
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	docs, err := corpus.Read(f)
	f.Close()
	if err != nil {
		return err
	}
	ps, err := pairs.Generate(docs, cfg)
	if err != nil {
		return err
	}
	w, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := pairs.Write(w, ps); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if *whole != "" {
		set := pairs.Whole(docs, cfg, ps, pairs.WholeConfig{PerCell: *probes, Quoted: *quoted})
		w, err := os.Create(*whole)
		if err != nil {
			return err
		}
		if err := pairs.WriteWhole(w, set); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		log.Info("whole-corpus set", "stored", len(set.Stored), "probes", len(set.Probes), "out", *whole)
	}
	byKind := map[string]int{}
	for _, p := range ps {
		byKind[p.Kind]++
	}
	log.Info("pairs generated", "pairs", len(ps), "out", *out, "by_kind", byKind)
	return nil
}
