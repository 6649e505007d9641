package server

import (
	"testing"
)

// FuzzDecodeRequests feeds arbitrary bodies to every request decoder: the
// result is a value or a client error (4xx), never a panic or a 5xx.
func FuzzDecodeRequests(f *testing.F) {
	for _, s := range []string{
		`{"text":"abc","k":3}`, `{"fingerprint":"0x1","since":"2026-01-01T00:00:00Z"}`,
		`{"id":"a","text":"b","attrs":{"x":"y"},"mode":"insert-if-unique"}`,
		`{"items":[{"text":"a"}],"limit":5}`, `{"items":[{"id":"a","fingerprint":"1"}],"mode":"insert"}`,
		`{`, `[]`, `null`, "{\"text\":\"\xff\"}", `{"k":1e400}`, `{"text":"a"}{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		targets := []any{&checkRequest{}, &documentRequest{}, &batchCheckRequest{}, &batchInsertRequest{}, &fingerprintRequest{}}
		for _, v := range targets {
			err := decodeBytes(body, v)
			if err == nil {
				continue
			}
			if p := classify(err); p.Status < 400 || p.Status >= 500 {
				t.Fatalf("decode error %v classified as %d", err, p.Status)
			}
		}
	})
}
