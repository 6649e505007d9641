package bulkload

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/simdex/simdex/fingerprint"
)

// Input formats.
const (
	// FormatAuto picks per file: .jsonl/.json/.ndjson (before any .gz/.zst)
	// are documents, anything else delimited fingerprints; stdin is sniffed
	// by its first byte ('{' means documents).
	FormatAuto = "auto"
	// FormatDocs is JSON Lines documents: {"id","title","text","time","attrs"}.
	FormatDocs = "docs"
	// FormatFingerprints is delimited lines: id, fingerprint (16 hex digits,
	// 0x-hex or decimal), time (RFC 3339 or Unix seconds), separated by a
	// comma or a tab. Blank lines and lines starting with '#' are skipped.
	FormatFingerprints = "fp"
)

// MaxLineBytes is the longest input line accepted (a longer one is a reject).
const MaxLineBytes = 8 << 20

// expandInputs turns file names and globs into a sorted, de-duplicated list
// (a glob's matches are sorted, so a rerun sees the same order). "-" is
// stdin and must be alone.
func expandInputs(patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		if p == "-" {
			if len(patterns) != 1 {
				return nil, fmt.Errorf("%w: stdin (-) cannot be mixed with files", ErrConfig)
			}
			return []string{"-"}, nil
		}
		if !strings.ContainsAny(p, "*?[") {
			out = append(out, p)
			continue
		}
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("%w: glob %q: %v", ErrConfig, p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: glob %q matches no file", ErrConfig, p)
		}
		slices.Sort(m)
		out = append(out, m...)
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, f := range out {
		if !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	return uniq, nil
}

// openInput opens one input with transparent gzip/zstd decompression
// (recognized by magic bytes, not by name). The returned closer closes
// everything.
func openInput(name string, stdin io.Reader, counted func(int64)) (io.Reader, func() error, error) {
	var raw io.Reader
	closeRaw := func() error { return nil }
	if name == "-" {
		raw = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		raw, closeRaw = f, f.Close
	}
	br := bufio.NewReaderSize(&countReader{r: raw, add: counted}, 1<<20)
	magic, _ := br.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("%s: gzip: %w", name, err), closeRaw())
		}
		zr.Multistream(true)
		return bufio.NewReaderSize(zr, 1<<20), func() error { return errors.Join(zr.Close(), closeRaw()) }, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("%s: zstd: %w", name, err), closeRaw())
		}
		return bufio.NewReaderSize(zr, 1<<20), func() error { zr.Close(); return closeRaw() }, nil
	}
	return br, closeRaw, nil
}

type countReader struct {
	r   io.Reader
	add func(int64)
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.add != nil && n > 0 {
		c.add(int64(n))
	}
	return n, err
}

// formatOf picks the format of a named input under FormatAuto.
func formatOf(name string, first byte) string {
	base := strings.ToLower(filepath.Base(name))
	for _, ext := range []string{".gz", ".gzip", ".zst", ".zstd"} {
		base = strings.TrimSuffix(base, ext)
	}
	if name == "-" {
		if first == '{' {
			return FormatDocs
		}
		return FormatFingerprints
	}
	for _, ext := range []string{".jsonl", ".json", ".ndjson"} {
		if strings.HasSuffix(base, ext) {
			return FormatDocs
		}
	}
	return FormatFingerprints
}

// lineReader returns lines without their end-of-line bytes. A line longer
// than MaxLineBytes is returned truncated with tooLong set (and its rest
// skipped), so one bad line cannot exhaust memory.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(chunk) > MaxLineBytes {
			tooLong = true
		} else {
			l.buf = append(l.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (err != io.EOF || len(l.buf) == 0 && !tooLong) {
			return nil, false, err
		}
		line = bytes.TrimRight(l.buf, "\r\n")
		return line, tooLong, nil
	}
}

// record is one parsed input line.
type record struct {
	id      string
	fp      fingerprint.Fingerprint
	titleFP fingerprint.Fingerprint
	exact   uint64
	sketch  fingerprint.Sketch // documents only: the docs cell's sketch
	chars   int
	bands   fingerprint.Bands // documents only: the LSH band signature
	at      time.Time
	attrs   map[string]string
	// title/text are set for documents until they are fingerprinted.
	title, text string
}

// errSkip marks a line that is not a record (blank, comment): not a reject.
var errSkip = errors.New("skip")

// parseFPLine parses "id<sep>fingerprint<sep>time".
func parseFPLine(line []byte) (record, error) {
	id, fp, at, err := parseFPFields(line)
	if err != nil {
		return record{}, err
	}
	return record{id: string(id), fp: fp, at: at}, nil
}

// parseFPFields is parseFPLine without allocating: id is a slice of line.
func parseFPFields(line []byte) (id []byte, fp fingerprint.Fingerprint, at time.Time, err error) {
	b := bytes.TrimSpace(line)
	if len(b) == 0 || b[0] == '#' {
		return nil, 0, time.Time{}, errSkip
	}
	sep := byte(',')
	if bytes.IndexByte(b, '\t') >= 0 {
		sep = '\t'
	}
	i := bytes.IndexByte(b, sep)
	j := -1
	if i >= 0 {
		if j = bytes.IndexByte(b[i+1:], sep); j >= 0 {
			j += i + 1
		}
	}
	if i < 0 || j < 0 || bytes.IndexByte(b[j+1:], sep) >= 0 {
		return nil, 0, time.Time{}, fmt.Errorf("want 3 fields (id, fingerprint, time) separated by %q, got %d", string(sep), bytes.Count(b, []byte{sep})+1)
	}
	if fp, err = parseFP(b[i+1 : j]); err != nil {
		return nil, 0, time.Time{}, err
	}
	if at, err = parseTimeBytes(bytes.TrimSpace(b[j+1:])); err != nil {
		return nil, 0, time.Time{}, err
	}
	return bytes.TrimSpace(b[:i]), fp, at, nil
}

// parseFP reads a fingerprint field: exactly 16 hex digits without
// allocating (the common form), anything else through fingerprint.Parse.
func parseFP(f []byte) (fingerprint.Fingerprint, error) {
	if len(f) == 16 {
		var v uint64
		ok := true
		for _, c := range f {
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				ok = false
			}
			v = v<<4 | uint64(d)
		}
		if ok {
			return fingerprint.Fingerprint(v), nil
		}
	}
	return fingerprint.Parse(string(f))
}

// parseTimeBytes is parseTime with a fast path for whole Unix seconds.
func parseTimeBytes(b []byte) (time.Time, error) {
	if n := len(b); n > 0 && n <= 11 {
		var sec int64
		digits := true
		for _, c := range b {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			sec = sec*10 + int64(c-'0')
		}
		if digits {
			return time.Unix(sec, 0).UTC(), nil
		}
	}
	return parseTime(string(b))
}

// parseTime accepts RFC 3339 or Unix seconds (integer or decimal).
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("missing time")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < -1e11 || f > 1e11 {
		return time.Time{}, fmt.Errorf("time %q: want RFC 3339 or Unix seconds", s)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// jsonDoc is one JSON Lines document.
type jsonDoc struct {
	ID    *string           `json:"id"`
	Title string            `json:"title"`
	Text  *string           `json:"text"`
	Time  json.RawMessage   `json:"time"`
	Attrs map[string]string `json:"attrs"`
}

// parseDocLine parses a JSON document line (fingerprinting comes later).
func parseDocLine(line []byte) (record, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return record{}, errSkip
	}
	var d jsonDoc
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return record{}, fmt.Errorf("bad JSON: %v", err)
	}
	if dec.More() {
		return record{}, errors.New("bad JSON: more than one value on the line")
	}
	if d.ID == nil {
		return record{}, errors.New("missing id")
	}
	if d.Text == nil {
		return record{}, errors.New("missing text")
	}
	var ts string
	if len(d.Time) > 0 && d.Time[0] == '"' {
		if err := json.Unmarshal(d.Time, &ts); err != nil {
			return record{}, fmt.Errorf("bad time: %v", err)
		}
	} else {
		ts = string(d.Time)
	}
	at, err := parseTime(ts)
	if err != nil {
		return record{}, err
	}
	return record{id: *d.ID, title: d.Title, text: *d.Text, at: at, attrs: d.Attrs}, nil
}
