package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/pairs"
)

func TestUsageErrors(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"corpus"},
		{"pairs", "-corpus", "x"},
		{"pairs", "-corpus", "/nonexistent", "-out", "y"},
		{"run"},
		{"explain", "-pairs", "x"},
		{"pairs", "-no-such-flag"},
	} {
		if err := run(context.Background(), log, args); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

func TestPairsCommand(t *testing.T) {
	dir := t.TempDir()
	var docs []corpus.Doc
	for i := range 40 {
		var b strings.Builder
		for s := range 3 + i%9 {
			fmt.Fprintf(&b, "Sentence %d about harbor %d and the council budget of town %d. ", s, i, i*7)
		}
		docs = append(docs, corpus.Doc{ID: fmt.Sprintf("d%02d", i), Source: "s", Lang: "en", Topic: fmt.Sprint(i % 2), Title: fmt.Sprint("T", i), Body: strings.TrimSpace(b.String())})
	}
	in := filepath.Join(dir, "corpus.jsonl")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := corpus.Write(f, docs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "pairs.jsonl")
	if err := run(context.Background(), slog.New(slog.DiscardHandler), []string{"pairs", "-corpus", in, "-out", out, "-seed", "3", "-kinds", "typos,neg_topic"}); err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ps, err := pairs.Read(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("no pairs written")
	}
	for _, p := range ps {
		if p.Kind != "typos" && p.Kind != "neg_topic" {
			t.Errorf("kind %s written with -kinds typos,neg_topic", p.Kind)
		}
	}
}
