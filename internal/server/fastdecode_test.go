package server

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The bodies real clients send take the fast path.
func TestFastCheckRequestAccepts(t *testing.T) {
	two, ten, zero, neg := 2, 10, 0, -1
	for _, tc := range []struct {
		body string
		want checkRequest
	}{
		{`{"fingerprint":"0123456789abcdef"}`, checkRequest{docInput: docInput{Fingerprint: "0123456789abcdef"}}},
		{" {\n \"title\" : \"T\\\"x\\\\\", \"text\":\"第一段\\n第二段\\t/\\/\", \"lang\":\"zh\",\"k\":2,\"limit\":10 }\r\n",
			checkRequest{docInput: docInput{Title: `T"x\`, Text: "第一段\n第二段\t//", Lang: "zh"}, searchParams: searchParams{K: &two, Limit: &ten}}},
		{`{"k":0,"text":"a"}`, checkRequest{docInput: docInput{Text: "a"}, searchParams: searchParams{K: &zero}}},
		{`{"text":"a","source":"example.com"}`, checkRequest{docInput: docInput{Text: "a"}, Source: "example.com"}},
		{`{"k":-1}`, checkRequest{searchParams: searchParams{K: &neg}}},
		{`{}`, checkRequest{}},
	} {
		var got checkRequest
		if !fastCheckRequest([]byte(tc.body), &got) {
			t.Errorf("%q: not taken by the fast path", tc.body)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

// Everything unusual goes to the general decoder, which owns the errors.
func TestFastCheckRequestDeclines(t *testing.T) {
	for _, body := range []string{
		``, `null`, `[]`, `{"Text":"a"}`, `{"text":"a","text":"b"}`, `{"text":"\u00e9"}`, `{"text":null}`,
		`{"since":"2024-01-01T00:00:00Z"}`, `{"k":1.0}`, `{"k":1e0}`, `{"k":01}`, `{"k":1234567890}`, `{"k":"1"}`,
		`{"text":"a"} {}`, `{"text":"a",}`, `{"text":"a" "lang":"zh"}`, "{\"text\":\"a\x01\"}", "{\"text\":\"\xff\"}",
		`{"text":"a`, `{"te\"xt":"a"}`, `{"extra":1}`, `{"text":"\x"}`,
	} {
		var req checkRequest
		if fastCheckRequest([]byte(body), &req) {
			t.Errorf("%q: taken by the fast path", body)
		}
	}
}

// FuzzFastCheckRequest: whatever the fast path accepts, encoding/json
// (through decodeBytes, the definition of the API) accepts too and decodes
// to the same request.
func FuzzFastCheckRequest(f *testing.F) {
	for _, s := range []string{
		`{"fingerprint":"0123456789abcdef"}`,
		`{"title":"T","text":"a\nb\"c","lang":"zh","k":3,"limit":5}`,
		`{"k":-0}`, `{"text":"\/\b\f\r\t"}`, `{"Text":"a"}`, `{"text":"a","text":"b"}`, ` { } `,
		`{"limit":999999999}`, `{"k":00}`, `{"text":"\u0041"}`, `{"text":"a","source":"s","source":"t"}`, `{"source":"\u00e9x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast checkRequest
		if !fastCheckRequest(body, &fast) {
			return
		}
		var slow checkRequest
		if err := decodeBytes(body, &slow); err != nil {
			t.Fatalf("%q: fast path accepted what decodeBytes rejects: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
		}
	})
}

// TestFastCheckRequestRandom is the fuzz property over seeded random
// mutations of typical bodies (cheap enough for every run).
func TestFastCheckRequestRandom(t *testing.T) {
	seeds := []string{
		`{"fingerprint":"0123456789abcdef"}`,
		`{"title":"标题","text":"第一段\n第二段 \"引号\" \\ end","lang":"zh","k":3,"limit":50}`,
		`{ "k" : 2 , "text" : "a\tb" }`,
	}
	alphabet := []byte("{}[]:,\"\\/ \n\t0123456789-+.eEnulltrfaskbxyz\x01\xff")
	r := rand.New(rand.NewPCG(3, 4))
	accepted := 0
	for i := range 20000 {
		b := mutateJSON(r, []byte(seeds[i%len(seeds)]), alphabet)
		var fast checkRequest
		if !fastCheckRequest(b, &fast) {
			continue
		}
		accepted++
		var slow checkRequest
		if err := decodeBytes(b, &slow); err != nil {
			t.Fatalf("%q: fast path accepted what decodeBytes rejects: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", b, fast, slow)
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d mutated bodies took the fast path: the test compares too little", accepted)
	}
	t.Logf("%d of 20000 mutated bodies took the fast path and matched encoding/json", accepted)
}

// BenchmarkDecodeCheck compares the fast path with the general decoder on
// the two bodies the load generator sends.
func BenchmarkDecodeCheck(b *testing.B) {
	text, err := json.Marshal(string(readText(b, "zh_article.txt")))
	if err != nil {
		b.Fatal(err)
	}
	bodies := map[string][]byte{
		"fingerprint": []byte(`{"fingerprint":"0123456789abcdef"}`),
		"text-1KB":    []byte(`{"text":` + string(text) + `,"lang":"zh"}`),
	}
	for _, name := range []string{"fingerprint", "text-1KB"} {
		body := bodies[name]
		b.Run(name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var req checkRequest
				if !fastCheckRequest(body, &req) {
					b.Fatal("declined")
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var req checkRequest
				if err := decodeBytes(body, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
