package seenbench

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
)

// TestReadFlags: an SMISMEMBER reply decodes into its flags, leaving the
// next reply untouched; anything but an array of :0 / :1 is an error.
func TestReadFlags(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []bool
	}{
		{"*3\r\n:1\r\n:0\r\n:1\r\n", []bool{true, false, true}},
		{"*0\r\n", []bool{}},
		{"*1\r\n:0\r\n", []bool{false}},
	} {
		next := "*1\r\n:1\r\n"
		r := bufio.NewReader(strings.NewReader(tc.in + next))
		got, err := readFlags(r, []bool{true, true, true, true})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("readFlags(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if got, err := readFlags(r, nil); err != nil || !slices.Equal(got, []bool{true}) {
			t.Fatalf("after %q: %v, %v", tc.in, got, err)
		}
	}
	for _, bad := range []string{"", "x\r\n", "*1\n:1\n", "*2\r\n:1\r\n", "*-1\r\n", "*1\r\n:2\r\n", "*1\r\n:10\r\n",
		"*1\r\n$1\r\n1\r\n", "*99999999999\r\n", "+OK\r\n", "-ERR wrong type\r\n", ":1\r\n"} {
		if _, err := readFlags(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("readFlags(%q) accepted", bad)
		}
	}
	if _, err := readFlags(bufio.NewReader(strings.NewReader("-ERR wrong type\r\n")), nil); err == nil || err.Error() != "redis: ERR wrong type" {
		t.Fatalf("error reply: %v", err)
	}
}

// FuzzRESP: readFlags never panics, and what it accepts is exactly an
// array of :0 / :1 lines (re-encoded, a prefix of the input).
func FuzzRESP(f *testing.F) {
	for _, s := range []string{"*2\r\n:1\r\n:0\r\n", "*0\r\n", "-ERR x\r\n", "*1\r\n$0\r\n\r\n", "*3\r\n:1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := readFlags(bufio.NewReader(bytes.NewReader(in)), nil)
		if err != nil {
			return
		}
		re := fmt.Appendf(nil, "*%d\r\n", len(got))
		for _, x := range got {
			if x {
				re = append(re, ":1\r\n"...)
			} else {
				re = append(re, ":0\r\n"...)
			}
		}
		if !bytes.HasPrefix(in, re) {
			t.Fatalf("accepted %q as %v", in, got)
		}
	})
}

// TestReadResponse: a 200 with a Content-Length yields exactly its body
// (the next response on the connection untouched); other statuses,
// chunked bodies, a missing or doubled length and "Connection: close" are
// errors.
func TestReadResponse(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 5\r\nX-Request-Id: a\r\n\r\nhello"
	r := bufio.NewReader(strings.NewReader(ok + ok))
	for range 2 {
		body, err := readResponse(r, make([]byte, 0, 2))
		if err != nil || string(body) != "hello" {
			t.Fatalf("%q, %v", body, err)
		}
	}
	for _, bad := range []string{
		"", "HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}",
		"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", "HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
	} {
		if body, err := readResponse(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("readResponse(%q) accepted: %q", bad, body)
		}
	}
}

// TestDecodeREST: each answer form decodes into the same flags, and the
// full form's ids come out for the cross-check; malformed or inconsistent
// answers are errors.
func TestDecodeREST(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	want := []bool{false, true, false, true}
	for _, tc := range []struct{ form, body string }{
		{"full", `{"user":"u","kept":["a","c"],"dropped":[{"index":1,"id":"b","reason":"seen"},{"index":3,"id":"d","reason":"seen"}]}` + "\n"},
		{"kept", `{"user":"u","kept":["a","c"]}`},
		{"indexes", `{"user":"u","kept_indexes":[0,2]}`},
		{"check", `{"user":"u","seen":[false,true,false,true]}`},
	} {
		var a answer
		a.reset(len(ids))
		if err := decodeREST([]byte(tc.body), tc.form, ids, &a); err != nil {
			t.Fatalf("%s: %v", tc.form, err)
		}
		if !slices.Equal(a.seen, want) || string(a.user) != "u" {
			t.Fatalf("%s: %v for %q", tc.form, a.seen, a.user)
		}
		if n := restMismatches(&a, tc.form, query{user: "u", ids: ids, seen: want}); n != 0 {
			t.Fatalf("%s: %d mismatches", tc.form, n)
		}
		if n := restMismatches(&a, tc.form, query{user: "v", ids: ids, seen: want}); n != len(ids) {
			t.Fatalf("%s: another user's answer: %d mismatches", tc.form, n)
		}
	}
	for _, tc := range []struct{ form, body string }{
		{"full", `{"user":"u","kept":["a","c"],"dropped":[{"index":4,"id":"b","reason":"seen"}]}`},
		{"full", `{"user":"u","dropped":[]}`},
		{"full", `{"user":"u","kept":["a\"c"],"dropped":[]}`},
		{"kept", `{"user":"u","kept":["c","a"]}`},
		{"kept", `{"user":"u","kept":["a","c"]} x`},
		{"indexes", `{"user":"u","kept_indexes":[2,0]}`},
		{"indexes", `{"user":"u","kept_indexes":[0,4]}`},
		{"indexes", `{"user":"u","kept_indexes":[0,-1]}`},
		{"check", `{"user":"u","seen":[false,true,false]}`},
		{"check", `{"user":"u","seen":[false,true,false,true,true]}`},
		{"check", `{"user":"u","seen":[0,1,0,1]}`},
		{"check", `{"user":"u","extra":1,"seen":[false,true,false,true]}`},
		{"check", `{"user":"u","seen":[false,true,false,true]`},
	} {
		var a answer
		a.reset(len(ids))
		if err := decodeREST([]byte(tc.body), tc.form, ids, &a); err == nil {
			t.Errorf("%s %q accepted", tc.form, tc.body)
		}
	}
	// A full answer whose ids do not match the candidates decodes, and
	// the cross-check counts every candidate.
	var a answer
	a.reset(len(ids))
	if err := decodeREST([]byte(`{"user":"u","kept":["a","x"],"dropped":[{"index":1,"id":"b","reason":"seen"},{"index":3,"id":"d","reason":"seen"}]}`), "full", ids, &a); err != nil {
		t.Fatal(err)
	}
	if n := restMismatches(&a, "full", query{user: "u", ids: ids, seen: want}); n != len(ids) {
		t.Fatalf("mismatched ids: %d", n)
	}
}

// FuzzDecodeREST: no answer body makes the decoder panic, for any form.
func FuzzDecodeREST(f *testing.F) {
	for _, s := range []string{`{"user":"u","kept":["a"],"dropped":[{"index":1,"id":"b","reason":"seen","distance":2}]}`,
		`{"user":"u","kept_indexes":[0,1]}`, `{"seen":[true,false]}`, `{"unknown_doc_ids":["x"],"kept":[]}`} {
		f.Add([]byte(s))
	}
	ids := []string{"a", "b", "c"}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, form := range []string{"full", "kept", "indexes", "check"} {
			var a answer
			a.reset(len(ids))
			_ = decodeREST(body, form, ids, &a)
			_ = restMismatches(&a, form, query{user: "u", ids: ids, seen: make([]bool, len(ids))})
		}
	})
}

// TestHTTPConnKeepAlive: the lean client against a real loopback server
// that answers two requests on one connection, checking what it was sent.
func TestHTTPConnKeepAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 2)
	done := make(chan struct{})
	go func() { // joined through done
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for k := range 2 {
			var req strings.Builder
			n := 0
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				req.WriteString(line)
				if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
					fmt.Sscan(v, &n)
				}
				if line == "\r\n" {
					break
				}
			}
			body := make([]byte, n)
			if _, err := r.Read(body); err != nil {
				return
			}
			got <- req.String() + string(body)
			answer := fmt.Sprintf(`{"n":%d}`, k)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer)
		}
	}()
	h, err := dialHTTP(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer h.c.Close()
	req := buildRequest(ln.Addr().String(), "/v1/users/u/seen/filter", []byte(`{"ids":["a"]}`))
	for k := range 2 {
		body, err := h.roundTrip(req, nil)
		if err != nil || string(body) != fmt.Sprintf(`{"n":%d}`, k) {
			t.Fatalf("round %d: %q, %v", k, body, err)
		}
		if r := <-got; r != string(req) {
			t.Fatalf("server got %q, want %q", r, req)
		}
	}
	h.c.Close()
	<-done
}
