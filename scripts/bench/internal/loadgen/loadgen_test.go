package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadResponse(t *testing.T) {
	m := &requestMaker{mode: "check-fp", want: 200, prefix: []byte(`{"fingerprint":"`)}
	for _, tc := range []struct {
		name, in  string
		ok, close bool
	}{
		{"ok", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n{\"fingerprint\":\"00\"}\n\n", true, false},
		{"ok lower-case header and close", "HTTP/1.1 200 OK\r\ncontent-length: 21\r\nConnection: close\r\n\r\n{\"fingerprint\":\"00\"}\n", true, true},
		{"problem", "HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\n{}", false, false},
		{"wrong shape", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]", false, false},
		{"truncated", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"fingerprint\":\"00\"}", false, true},
		{"no length", "HTTP/1.1 200 OK\r\n\r\n{}", false, true},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", false, true},
		{"garbage", "hello\r\n", false, true},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, closing, err := m.readResponse(bufio.NewReader(strings.NewReader(tc.in)), nil)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && closing != tc.close {
				t.Fatalf("close %v, want %v", closing, tc.close)
			}
		})
	}
}

func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 21\r\n\r\n{\"fingerprint\":\"00\"}\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 503 x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
	m := &requestMaker{mode: "check-fp", want: 200, prefix: []byte(`{"fingerprint":"`)}
	f.Fuzz(func(t *testing.T, b []byte) {
		if strings.Contains(string(b), "Content-Length") && len(b) > 1<<16 {
			return
		}
		_, n, _, err := m.readResponse(bufio.NewReader(strings.NewReader(string(b))), nil)
		if err == nil && n > len(b) {
			t.Fatalf("body of %d bytes from %d input bytes", n, len(b))
		}
	})
}

// TestDrive runs the load generator against a real HTTP server on loopback
// that checks every request is well-formed JSON of the mode's shape, fails
// every 10th one and closes the connection every 7th; the counts must add
// up.
func TestDrive(t *testing.T) {
	for _, mode := range []string{"check-fp", "check-text", "check-text/source", "insert", "insert-if-unique"} {
		t.Run(mode, func(t *testing.T) {
			mode, source, _ := strings.Cut(mode, "/")
			var served, failed atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := served.Add(1)
				insert := strings.HasPrefix(mode, "insert")
				var body map[string]string
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					t.Errorf("request %d: %v", n, err)
				}
				switch {
				case mode == "check-fp" && len(body["fingerprint"]) != 16,
					mode == "check-text" && (!strings.HasPrefix(body["text"], "正文") || body["lang"] != "zh" || body["source"] != source),
					insert && (!strings.HasPrefix(body["id"], "load-") || r.Header.Get("Authorization") != "Bearer k"),
					mode == "insert" && body["mode"] != "",
					mode == "insert-if-unique" && body["mode"] != "insert-if-unique":
					t.Errorf("request %d: body %v", n, body)
				}
				if n%7 == 0 {
					w.Header().Set("Connection", "close")
				}
				if n%10 == 0 {
					failed.Add(1)
					http.Error(w, "no", http.StatusServiceUnavailable)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				if insert {
					// insert-if-unique answers 200 for a duplicate, 201 when stored.
					if mode == "insert-if-unique" && n%2 == 0 {
						io.WriteString(w, `{"id":"load-1","stored":false}`+"\n")
						return
					}
					w.WriteHeader(http.StatusCreated)
					io.WriteString(w, `{"id":"load-1","stored":true}`+"\n")
					return
				}
				io.WriteString(w, `{"fingerprint":"0123456789abcdef","duplicates":[]}`+"\n")
			}))
			defer srv.Close()
			text := t.TempDir() + "/t.txt"
			if err := os.WriteFile(text, []byte("正文\n\"quoted\""), 0o644); err != nil {
				t.Fatal(err)
			}
			res := driveTest(t, config{addr: strings.TrimPrefix(srv.URL, "http://"), mode: mode, duration: 200 * time.Millisecond, concurrency: 3, textFile: text, apiKey: "k", source: source})
			// Every request sent is read to the end before the deadline is
			// checked, so the counts are exact.
			if s := served.Load(); int64(res.h.Len())+int64(res.errs) != s || int64(res.errs) != failed.Load() {
				t.Fatalf("served %d (failed %d), counted %d ok + %d errors", s, failed.Load(), res.h.Len(), res.errs)
			}
			if res.errs == 0 || !errors.Is(res.firstErr, errResponse) {
				t.Fatalf("errors %d, first %v: the 503s were not counted", res.errs, res.firstErr)
			}
		})
	}
}

// TestDriveBatch: batch inserts of text documents send --batch items of
// ~1 KB text with distinct ids, and an answer listing item errors counts
// as an error.
func TestDriveBatch(t *testing.T) {
	for _, mode := range []string{"insert", "insert-if-unique"} {
		t.Run(mode, func(t *testing.T) {
			var served, failed atomic.Int64
			var mu sync.Mutex
			ids := map[string]bool{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := served.Add(1)
				var body struct {
					Mode  string `json:"mode"`
					Items []struct {
						ID, Text, Fingerprint string
					} `json:"items"`
				}
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					t.Errorf("request %d: %v", n, err)
				}
				if r.URL.Path != "/v1/documents/batch" || body.Mode != mode || len(body.Items) != 5 {
					t.Errorf("request %d: %s mode %q, %d items", n, r.URL.Path, body.Mode, len(body.Items))
				}
				mu.Lock()
				for _, it := range body.Items {
					if ids[it.ID] || len(it.Text) < 900 || it.Fingerprint != "" {
						t.Errorf("request %d: item %q: repeated id, or %d bytes of text, fingerprint %q", n, it.ID, len(it.Text), it.Fingerprint)
					}
					ids[it.ID] = true
				}
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if n%4 == 0 {
					failed.Add(1)
					io.WriteString(w, `{"results":[null],"errors":[{"index":0,"error":{"kind":"bad-document"}}]}`+"\n")
					return
				}
				io.WriteString(w, `{"results":[{"id":"x","stored":true}],"errors":[]}`+"\n")
			}))
			defer srv.Close()
			res := driveTest(t, config{addr: strings.TrimPrefix(srv.URL, "http://"), mode: mode, duration: 200 * time.Millisecond, concurrency: 2, batch: 5, docs: "text"})
			if s := served.Load(); int64(res.h.Len())+int64(res.errs) != s || int64(res.errs) != failed.Load() || res.errs == 0 {
				t.Fatalf("served %d (failed %d), counted %d ok + %d errors", s, failed.Load(), res.h.Len(), res.errs)
			}
		})
	}
}

// TestDriveOpenLoop: with --rate the connections send on schedule, about
// rate x duration requests in all, and record how late each was sent.
func TestDriveOpenLoop(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"fingerprint":"0123456789abcdef","duplicates":[]}`+"\n")
	}))
	defer srv.Close()
	res := driveTest(t, config{addr: strings.TrimPrefix(srv.URL, "http://"), mode: "check-fp", duration: 300 * time.Millisecond, concurrency: 4, rate: 400})
	// 4 connections, one request each every 10 ms, due times in [0, 300
	// ms]: 30 or 31 per connection, whatever the machine's speed (a late
	// request is still sent, and timed from its due time).
	if n := int64(res.h.Len()); n != served.Load() || n < 120 || n > 124 || res.errs != 0 {
		t.Fatalf("%d requests answered, %d served, %d errors: want 120-124, all answered", res.h.Len(), served.Load(), res.errs)
	}
	if res.late.Len() != res.h.Len() {
		t.Fatalf("lateness recorded for %d of %d requests", res.late.Len(), res.h.Len())
	}
}

// driveTest runs c's connections for c.duration against a test server.
func driveTest(t *testing.T, c config) *result {
	t.Helper()
	m, err := newRequestMaker(c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := driveOnce(context.Background(), c, m, c.duration)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
