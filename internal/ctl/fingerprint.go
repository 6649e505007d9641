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

func runFingerprint(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "fingerprint")
	title := fs.String("title", "", "document title")
	lang := fs.String("lang", "", "language hint: zh or en (default: detect per run)")
	top := fs.Int("top", 20, "how many of the heaviest features to list (0: all)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return fmt.Errorf("%w: at most one FILE", ErrUsage)
	}
	if *top < 0 {
		return fmt.Errorf("%w: --top must be >= 0", ErrUsage)
	}
	name := "-"
	if len(pos) == 1 {
		name = pos[0]
	}
	body, err := readInput(env, name)
	if err != nil {
		return err
	}
	f, err := env.fingerprinter()
	if err != nil {
		return err
	}
	res, feats, err := f.Features(fingerprint.Document{Title: *title, Body: body, Lang: *lang})
	if err != nil {
		return err
	}
	if *top > 0 && len(feats) > *top {
		feats = feats[:*top]
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
