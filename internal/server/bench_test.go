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
// benchmark's check-text case without the network. cpu-µs/op is the
// process's CPU per request (fingerprinting included), the number to
// compare when other processes share the cores.
func BenchmarkCheckText(b *testing.B) {
	text, err := os.ReadFile("testdata/zh_article.txt")
	if err != nil {
		b.Fatal(err)
	}
	quoted, _ := json.Marshal(strings.TrimSpace(string(text)))
	quoted = quoted[:len(quoted)-1] // the closing quote comes after the variation
	for _, mode := range []kvindex.BandsMode{kvindex.BandsOff, kvindex.BandsOn} {
		b.Run("bands="+mode.String(), func(b *testing.B) {
			cfg := DefaultConfig()
			st, err := pebblestore.Open(b.TempDir(), pebblestore.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			ix, err := kvindex.Open(context.Background(), st, kvindex.Config{Layout: fingerprint.DefaultLayout, RecipeVersion: fingerprint.RecipeVersion,
				Confirm: cfg.judge(sharedFingerprinter(b)).Confirm, Bands: mode})
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
			var body []byte
			i := 0
			do := func() {
				body = append(append(body[:0], `{"text":`...), quoted...)
				body = fmt.Appendf(body, ` 编号%d。","lang":"zh"}`, i)
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
