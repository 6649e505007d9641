package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

// shortTexts are n short English texts (2-3 sentences of 7-14 words from
// the sentences of testdata/en_article.txt, reshuffled word by word, so
// every text is distinct but shares vocabulary), seeded.
func shortTexts(tb testing.TB, n int, seed uint64) []string {
	raw, err := os.ReadFile("testdata/en_article.txt")
	if err != nil {
		tb.Fatal(err)
	}
	words := strings.Fields(strings.ToLower(string(raw)))
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			for w := range 7 + r.IntN(8) {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strings.Trim(words[r.IntN(len(words))], ".,;:!?\"'()"))
			}
			b.WriteString(". ")
		}
		out[i] = strings.TrimSpace(b.String())
	}
	return out
}

// shortIndex stores n short texts (as the server stores them: fingerprint,
// sketch, bands and text keys, normalized text) in a fresh Pebble index
// and returns the server over it, the texts, and the insert time per
// document.
func shortIndex(b *testing.B, n int) (*Server, []string, time.Duration) {
	cfg := DefaultConfig()
	st, err := pebblestore.Open(b.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	ix, err := kvindex.Open(context.Background(), st, kvindex.Config{Layout: fingerprint.DefaultLayout, RecipeVersion: fingerprint.RecipeVersion, Confirm: cfg.judge(sharedFingerprinter(b)).Confirm})
	if err != nil {
		st.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	fpr := sharedFingerprinter(b)
	texts := shortTexts(b, n, 1)
	start := time.Now()
	rule := cfg.rule()
	for i := 0; i < n; i += 100 {
		var docs []kvindex.Document
		for j := i; j < min(i+100, n); j++ {
			res, err := fpr.Fingerprint(fingerprint.Document{Body: texts[j], Lang: "en"})
			if err != nil {
				continue
			}
			docs = append(docs, kvindex.Document{ID: fmt.Sprint(j), Fingerprint: res.Simhash, ExactHash: res.ExactHash, Sketch: res.Sketch, Chars: res.Chars, Bands: res.Bands, Text: rule.KeepText(res.Chars, res.Text, kvindex.MaxTextBytes), Body: res.Text})
		}
		if _, _, err := ix.InsertBatch(context.Background(), docs, kvindex.InsertAlways, 3); err != nil {
			b.Fatal(err)
		}
	}
	perDoc := time.Since(start) / time.Duration(n)
	srv, err := New(cfg, ix, fpr, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return srv, texts, perDoc
}

// BenchmarkCheckShortText measures POST /v1/check by text through the
// handler stack against 10^4 short texts stored as the server stores them
// (band rows, text keys, docs cells with text): a short query (a stored
// text with a dateline and a sign-off line around it, as a copy on another
// site: found through the candidate stages and judged by the alignment) and a long one (the ~1.2 KB Chinese
// article, which also looks up its sentences' text keys). insert-µs/doc is
// the setup's insert time per document (fingerprinting included, batches
// of 100). Run it on two commits to compare (BENCHMARKS.md).
func BenchmarkCheckShortText(b *testing.B) {
	srv, texts, perDoc := shortIndex(b, 10_000)
	zh, err := os.ReadFile("testdata/zh_article.txt")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body func(i int) []byte
	}{
		{"short", func(i int) []byte {
			t := "Reported by the wire service this morning.\n" + texts[(i*7919)%len(texts)] + "\nShare this story with your friends and family."
			q, _ := json.Marshal(map[string]string{"text": t, "lang": "en"})
			return q
		}},
		{"long_zh", func(i int) []byte {
			q, _ := json.Marshal(map[string]string{"text": strings.TrimSpace(string(zh)) + fmt.Sprintf(" 编号%d。", i), "lang": "zh"})
			return q
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			found := 0
			do := func(i int) {
				req := httptest.NewRequest(http.MethodPost, "/v1/check", bytes.NewReader(tc.body(i)))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
				if bytes.Contains(w.Body.Bytes(), []byte(`"duplicate":true`)) {
					found++
				}
			}
			for i := range 100 {
				do(i)
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			n := 0
			for b.Loop() {
				do(n)
				n++
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/op")
			b.ReportMetric(float64(found)/float64(n+100), "found/op")
			b.ReportMetric(float64(perDoc.Microseconds()), "insert-µs/doc")
		})
	}
}
