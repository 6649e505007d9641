package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/simdex/simdex/fingerprint"
)

// maxInput bounds what the verbs read (the fingerprinter refuses more
// anyway; this keeps a mistaken pipe from eating memory).
const maxInput = 64 << 20

var fingerprintVerb = Verb{
	Name:    "fingerprint",
	Usage:   "[--title T] [--lang zh|en] [--top N] [FILE|-]",
	Summary: "fingerprint a text file (or stdin) and print the result as JSON",
	Run:     runFingerprint,
}

// FingerprintOutput is the JSON simdexctl fingerprint prints. Hashes are
// strings: JSON numbers lose precision above 2^53.
type FingerprintOutput struct {
	Simhash       fingerprint.Fingerprint `json:"simhash"`
	SimhashDec    string                  `json:"simhash_decimal"`
	TitleSimhash  fingerprint.Fingerprint `json:"title_simhash"`
	ExactHash     string                  `json:"exact_hash"` // 16 hex digits
	Features      int                     `json:"features"`
	Words         int                     `json:"words"`
	TitleFeatures int                     `json:"title_features"`
	Chars         int                     `json:"chars"`
	Recipe        uint32                  `json:"recipe"`
	Top           []fingerprint.Feature   `json:"top_features"`
}

// fingerprintConfig is the fingerprint verb's configuration.
type fingerprintConfig struct {
	Title string
	// Lang is the language hint, "zh" or "en" ("": detect).
	Lang string
	// Top is how many of the heaviest features to list (0: all).
	Top int
	// File is the text's file, "-" for stdin.
	File string
}

func defaultFingerprintConfig() fingerprintConfig { return fingerprintConfig{Top: 20, File: "-"} }

// Validate reports what is wrong with c (wrapping ErrUsage).
func (c fingerprintConfig) Validate() error {
	if c.Top < 0 {
		return fmt.Errorf("%w: --top must be >= 0", ErrUsage)
	}
	return nil
}

// parseFingerprint parses the verb's arguments.
func parseFingerprint(env *Env, args []string) (fingerprintConfig, error) {
	c := defaultFingerprintConfig()
	s := newSet(env, "")
	fs := s.Flags()
	fs.StringVar(&c.Title, "title", c.Title, "document title")
	fs.StringVar(&c.Lang, "lang", c.Lang, "language hint: zh or en (default: detect per run)")
	fs.IntVar(&c.Top, "top", c.Top, "how many of the heaviest features to list (0: all)")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) > 1 {
		return c, fmt.Errorf("%w: at most one FILE", ErrUsage)
	}
	if len(pos) == 1 {
		c.File = pos[0]
	}
	return c, c.Validate()
}

func runFingerprint(ctx context.Context, env *Env, args []string) error {
	c, err := parseFingerprint(env, args)
	if err != nil {
		return err
	}
	body, err := readInput(env, c.File)
	if err != nil {
		return err
	}
	f, err := env.fingerprinter()
	if err != nil {
		return err
	}
	res, feats, err := f.Features(fingerprint.Document{Title: c.Title, Body: body, Lang: c.Lang})
	if err != nil {
		return err
	}
	if c.Top > 0 && len(feats) > c.Top {
		feats = feats[:c.Top]
	}
	out := FingerprintOutput{
		Simhash:       res.Simhash,
		SimhashDec:    strconv.FormatUint(uint64(res.Simhash), 10),
		TitleSimhash:  res.TitleSimhash,
		ExactHash:     fmt.Sprintf("%016x", res.ExactHash),
		Features:      res.Features,
		Words:         res.Words,
		TitleFeatures: res.TitleFeatures,
		Chars:         res.Chars,
		Recipe:        res.Recipe,
		Top:           feats,
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// readInput reads a file, or stdin for "-".
func readInput(env *Env, name string) (string, error) {
	var r io.Reader
	if name == "-" {
		if env.Stdin == nil {
			return "", fmt.Errorf("%w: no stdin", ErrUsage)
		}
		r = env.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxInput {
		return "", fmt.Errorf("%s: larger than %d bytes", name, maxInput)
	}
	return string(b), nil
}
