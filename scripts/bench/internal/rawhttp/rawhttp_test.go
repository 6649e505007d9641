package rawhttp

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestRead: well-framed answers yield their status, exact body and
// closing flag, the next answer on the connection untouched; broken
// framing is an error.
func TestRead(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 5\r\nX-Request-Id: a\r\n\r\nhello"
	r := bufio.NewReader(strings.NewReader(ok + ok))
	for range 2 {
		st, body, closing, err := Read(r, make([]byte, 0, 2))
		if err != nil || st != 200 || string(body) != "hello" || closing {
			t.Fatalf("%d %q %v %v", st, body, closing, err)
		}
	}
	for _, tc := range []struct {
		in      string
		status  int
		closing bool
	}{
		{"HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\n{}", 400, false},
		{"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 503, true},
		{"HTTP/1.1 201 Created\r\nconnection: Close\r\nContent-Length: 2\r\n\r\n{}", 201, true},
	} {
		st, _, closing, err := Read(bufio.NewReader(strings.NewReader(tc.in)), nil)
		if err != nil || st != tc.status || closing != tc.closing {
			t.Errorf("Read(%q) = %d, closing %v, %v", tc.in, st, closing, err)
		}
	}
	for _, bad := range []string{
		"", "hello\r\n", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", "HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", "HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
	} {
		if st, body, _, err := Read(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("Read(%q) accepted: %d %q", bad, st, body)
		}
	}
}

// TestAppendPost: the request bytes are what net/http's server parses as
// a POST of the body with the headers given.
func TestAppendPost(t *testing.T) {
	head := PostHead("127.0.0.1:8080", "/v1/check", "Authorization: Bearer k")
	b := AppendPost(nil, head, []byte(`{"fingerprint":"00"}`))
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != "POST" || req.URL.Path != "/v1/check" || req.Host != "127.0.0.1:8080" ||
		req.Header.Get("Authorization") != "Bearer k" || req.ContentLength != 20 || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%+v", req)
	}
}

// FuzzRead: Read never returns a body longer than its input nor panics.
func FuzzRead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 21\r\n\r\n{\"fingerprint\":\"00\"}\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 503 x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, body, _, err := Read(bufio.NewReader(bytes.NewReader(b)), nil)
		if err == nil && len(body) > len(b) {
			t.Fatalf("body of %d bytes from %d input bytes", len(body), len(b))
		}
	})
}
