package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
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
