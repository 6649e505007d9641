package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// BenchmarkCheckFingerprint measures POST /v1/check by fingerprint through
// the whole handler stack (middleware, decoding, lookup, encoding), without
// the network, against 10^5 stored documents. Profile with -cpuprofile to see
// where a request's CPU goes.
func BenchmarkCheckFingerprint(b *testing.B) {
	ix := openIndex(b, b.TempDir(), fingerprint.DefaultLayout, nil)
	defer ix.Close()
	r := rand.New(rand.NewPCG(1, 1))
	fps := make([]fingerprint.Fingerprint, 100_000)
	for i := 0; i < len(fps); i += 1000 {
		var docs []kvindex.Document
		for j := i; j < i+1000; j++ {
			fps[j] = fingerprint.Fingerprint(r.Uint64())
			docs = append(docs, kvindex.Document{ID: fmt.Sprint(j), Fingerprint: fps[j]})
		}
		if _, _, err := ix.InsertBatch(context.Background(), docs, kvindex.InsertAlways, 3); err != nil {
			b.Fatal(err)
		}
	}
	srv, err := New(DefaultConfig(), ix, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	bodies := make([][]byte, 1024)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"fingerprint": "%s"}`, fps[r.IntN(len(fps))]^1))
	}
	i := 0
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/check", bytes.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		io.Copy(io.Discard, w.Body)
		i++
	}
}

// BenchmarkCheckText measures POST /v1/check by text (the ~1.2 KB Chinese
// article of scripts/bench/loadgen, varied per request as loadgen varies
// it) through the handler stack, against 10^5 documents stored by
// fingerprint, on an index with LSH band rows and on one without: the REST
// benchmark's check-text case without the network. With bands, also
// naming a source: "source" (no stored document holds the text's
// sentences, so no scoped row is read), and "held" with and without the
// source (the article is stored with that source, so the checks find it and
// a check naming the source reads every sentence's scoped row: a check of
// a copy). cpu-µs/op is the
// process's CPU per request (fingerprinting included), the number to
// compare when other processes share the cores.
func BenchmarkCheckText(b *testing.B) {
	text, err := os.ReadFile("testdata/zh_article.txt")
	if err != nil {
		b.Fatal(err)
	}
	quoted, _ := json.Marshal(strings.TrimSpace(string(text)))
	quoted = quoted[:len(quoted)-1] // the closing quote comes after the variation
	for _, tc := range []struct {
		mode   kvindex.BandsMode
		source string
		held   bool
	}{{kvindex.BandsOff, "", false}, {kvindex.BandsOn, "", false}, {kvindex.BandsOn, "example.com", false}, {kvindex.BandsOn, "", true}, {kvindex.BandsOn, "example.com", true}} {
		name := "bands=" + tc.mode.String()
		if tc.source != "" {
			name += "/source"
		}
		if tc.held {
			name += "/held"
		}
		mode := tc.mode
		b.Run(name, func(b *testing.B) {
			cfg := DefaultConfig()
			st, err := pebblestore.Open(b.TempDir(), pebblestore.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			ix, err := kvindex.Open(context.Background(), st, kvindex.Config{Layout: fingerprint.DefaultLayout, RecipeVersion: fingerprint.RecipeVersion,
				Confirm: cfg.judge(sharedFingerprinter(b)).Confirm, Bands: mode, SourceKeyMinDocs: cfg.Rule.TemplateMinDocs})
			if err != nil {
				st.Close()
				b.Fatal(err)
			}
			defer ix.Close()
			r := rand.New(rand.NewPCG(1, 1))
			for i := 0; i < 100_000; i += 1000 {
				var docs []kvindex.Document
				for j := i; j < i+1000; j++ {
					docs = append(docs, kvindex.Document{ID: fmt.Sprint(j), Fingerprint: fingerprint.Fingerprint(r.Uint64())})
				}
				if _, _, err := ix.InsertBatch(context.Background(), docs, kvindex.InsertAlways, 3); err != nil {
					b.Fatal(err)
				}
			}
			srv, err := New(cfg, ix, sharedFingerprinter(b), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			if tc.held {
				doc := append(append([]byte(`{"id":"base","text":`), quoted...), `","lang":"zh","attrs":{"source":"example.com"}}`...)
				req := httptest.NewRequest(http.MethodPost, "/v1/documents", bytes.NewReader(doc))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusCreated {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			end := `","lang":"zh"}`
			if tc.source != "" {
				end = `","lang":"zh","source":"` + tc.source + `"}`
			}
			var body []byte
			i := 0
			do := func() {
				body = append(append(body[:0], `{"text":`...), quoted...)
				body = fmt.Appendf(body, ` 编号%d。%s`, i, end)
				req := httptest.NewRequest(http.MethodPost, "/v1/check", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
				i++
			}
			for range 200 { // warm-up: the gse dictionary's pages, the row cache
				do()
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			n := 0
			for b.Loop() {
				do()
				n++
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/op")
		})
	}
}
