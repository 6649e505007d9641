package main

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestRESPReplies: readRaw frames exactly one reply (leaving the next
// untouched) and parseReply decodes what it framed.
func TestRESPReplies(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"+OK\r\n", "OK"},
		{":0\r\n", int64(0)},
		{":-12\r\n", int64(-12)},
		{"$3\r\nabc\r\n", "abc"},
		{"$0\r\n\r\n", ""},
		{"$-1\r\n", nil},
		{"*3\r\n:1\r\n:0\r\n:1\r\n", []any{int64(1), int64(0), int64(1)}},
		{"*2\r\n$2\r\nhi\r\n*1\r\n:7\r\n", []any{"hi", []any{int64(7)}}},
		{"*0\r\n", []any{}},
	} {
		next := ":99\r\n"
		r := bufio.NewReader(strings.NewReader(tc.in + next))
		raw, err := readRaw(r, nil)
		if err != nil || string(raw) != tc.in {
			t.Fatalf("readRaw(%q) = %q, %v", tc.in, raw, err)
		}
		got, err := parseReply(raw)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("parseReply(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
		if rest, err := readRaw(r, nil); err != nil || string(rest) != next {
			t.Fatalf("after %q: %q, %v", tc.in, rest, err)
		}
	}
	if v, err := parseReply([]byte("-ERR wrong type\r\n")); err != nil || v.(error).Error() != "redis: ERR wrong type" {
		t.Fatalf("error reply: %v, %v", v, err)
	}
	for _, bad := range []string{"", "x\r\n", ":1\n", "$5\r\nab\r\n", "*2\r\n:1\r\n", "$-2\r\n", "*-5\r\n", ":1\r\n:2\r\n", "*99999999999\r\n", "$abc\r\n"} {
		if _, err := parseReply([]byte(bad)); err == nil {
			t.Errorf("parseReply(%q) accepted", bad)
		}
	}
}

// FuzzRESP: neither reader panics; what readRaw frames, parseReply
// decodes without trailing bytes, and the framing is a prefix of the input.
func FuzzRESP(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n:1\r\n:0\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*1\r\n*1\r\n$0\r\n\r\n", "-ERR x\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = parseReply(in)
		raw, err := readRaw(bufio.NewReader(bytes.NewReader(in)), nil)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(in, raw) {
			t.Fatalf("framed %q is not a prefix of %q", raw, in)
		}
		if _, err := parseReply(raw); err != nil && !errors.Is(err, errReply) {
			t.Fatalf("parseReply of a framed reply: %v", err)
		}
	})
}
