package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/seen"
)

// BenchmarkSeenFilterREST measures POST /v1/users/{user}/seen/filter with
// 500 candidates (half seen, of 1000 the user has seen) through the whole
// handler stack, without the network, in the request forms: candidate
// objects, plain ids (full answer), and plain ids with the compact
// answers. Profile with -cpuprofile.
func BenchmarkSeenFilterREST(b *testing.B) {
	ix := openIndex(b, b.TempDir(), fingerprint.DefaultLayout, nil)
	defer ix.Close()
	svc, err := seen.Open(context.Background(), ix.Store(), seen.Config{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	marks := make([]seen.TimedMark, 1000)
	for j := range marks {
		marks[j] = seen.TimedMark{Mark: seen.Mark{ID: fmt.Sprintf("%016x", j*7919)}, Time: now.Add(-time.Duration(j%30)*24*time.Hour - time.Minute)}
	}
	if _, err := svc.Import(context.Background(), "reader", marks); err != nil {
		b.Fatal(err)
	}
	cands := make([]map[string]string, 500)
	for k := range cands {
		id := fmt.Sprintf("new-%d", k)
		if k%2 == 0 {
			id = marks[k].ID
		}
		cands[k] = map[string]string{"id": id}
	}
	ids := make([]string, len(cands))
	for k, c := range cands {
		ids[k] = c["id"]
	}
	body, _ := json.Marshal(map[string]any{"candidates": cands})
	idsBody, _ := json.Marshal(map[string]any{"ids": ids})
	keptBody, _ := json.Marshal(map[string]any{"ids": ids, "answer": "kept"})
	indexesBody, _ := json.Marshal(map[string]any{"ids": ids, "answer": "indexes"})
	srv, err := New(DefaultConfig(), ix, nil, nil, nil, WithSeen(svc))
	if err != nil {
		b.Fatal(err)
	}
	for _, form := range []struct {
		name string
		body []byte
	}{{"candidates", body}, {"ids", idsBody}, {"ids-kept", keptBody}, {"ids-indexes", indexesBody}} {
		b.Run(form.name, func(b *testing.B) {
			cpu0 := processCPU(b)
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/users/reader/seen/filter", bytes.NewReader(form.body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			// CPU per request, all threads (GC included): the figure that
			// stays comparable when other processes share the cores.
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
