package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/seen"
)

// seenForms are the four seen read bodies with a fast decoder (the
// single-user filter twice: fresh and into a pooled list): each
// decodes body with the fast path (reporting whether it took it) and with
// decodeBytes, the definition of the API.
var seenForms = []seenForm{
	seenFormOf("filter", func(b []byte, r *seenFilterRequest) bool { return fastSeenFilterAliased(bytes.Clone(b), r, nil) }),
	// As the handler decodes: into a stale pooled id list (the strings
	// alias the clone).
	seenFormOf("filter-pooled", func(b []byte, r *seenFilterRequest) bool {
		return fastSeenFilterAliased(bytes.Clone(b), r, append(make([]string, 0, 1024), "stale", "", "ids"))
	}),
	seenFormOf("check", func(b []byte, r *seenCheckRequest) bool { return fastSeenCheckAliased(bytes.Clone(b), r, nil) }),
	seenFormOf("filter-batch", fastSeenFilterBatch),
	seenFormOf("check-batch", fastSeenCheckBatch),
}

// seenForm is one body form: its fast decoder and decodeBytes into the
// same request type.
type seenForm struct {
	name string
	fast func(body []byte) (any, bool)
	slow func(body []byte) (any, error)
}

// seenFormOf is the form of request type T whose fast decoder is fast.
func seenFormOf[T any](name string, fast func(body []byte, r *T) bool) seenForm {
	return seenForm{
		name: name,
		fast: func(b []byte) (any, bool) { var r T; ok := fast(b, &r); return r, ok },
		slow: func(b []byte) (any, error) { var r T; err := decodeBytes(b, &r); return r, err },
	}
}

// compareSeenForms fails t if a fast decoder accepts body and decodes it
// differently from decodeBytes (or decodeBytes rejects it); it returns how
// many forms took the fast path.
func compareSeenForms(t *testing.T, body []byte) int {
	t.Helper()
	taken := 0
	for _, f := range seenForms {
		fast, ok := f.fast(body)
		if !ok {
			continue
		}
		taken++
		slow, err := f.slow(body)
		if err != nil {
			t.Fatalf("%s %q: fast path accepted what decodeBytes rejects: %v", f.name, body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s %q:\nfast          %+v\nencoding/json %+v", f.name, body, fast, slow)
		}
	}
	return taken
}

func formByName(t *testing.T, name string) int {
	for i, f := range seenForms {
		if f.name == name {
			return i
		}
	}
	t.Fatalf("no form %q", name)
	return -1
}

// The bodies real clients send take the fast path and decode as
// encoding/json decodes them.
func TestSeenFastDecodeAccepts(t *testing.T) {
	for _, tc := range []struct{ form, body string }{
		{"filter", `{"ids":["a","b","c"]}`},
		{"filter", `{"ids":["a","b","c"],"answer":"indexes"}`},
		{"filter", `{"answer":"kept","ids":["a"]}`},
		{"filter", `{"answer":"no-such-form"}`}, // parseAnswer's error
		{"filter", `{"ids":[]}`},
		{"filter", `{}`},
		{"filter", " { \"ids\" : [ \"a\" , \"b\\\"q\\\\\\n\" ] , \"near\" : false }\n"},
		{"filter", `{"candidates":[{"id":"a","doc_id":"d1"},{"id":"b","fingerprint":"0123456789abcdef"},{}],"near":true,"k":2}`},
		{"filter", `{"candidates":[{"fingerprint":"0x1f","id":"x"}],"ids":[],"k":-1}`}, // "not both" is toFilter's error
		{"filter", `{"ids":["第一","<&>","` + strings.Repeat("z", 300) + `"]}`},
		{"check", `{"ids":["a","b"]}`},
		{"check", `{"ids":[]}`},
		{"check", `{}`},
		{"filter-batch", `{"users":[{"user":"u1","ids":["a"]},{"user":"u2","candidates":[{"id":"b"}],"near":true}]}`},
		{"filter-batch", `{"users":[]}`},
		{"filter-batch", `{"users":[{"user":"u1","ids":["a"],"answer":"indexes"},{"answer":"kept","user":"u2","ids":[]}]}`},
		{"filter-batch", `{}`},
		{"check-batch", `{"users":[{"user":"u1","ids":["a","b"]},{"ids":[],"user":"u2"}]}`},
		{"check-batch", `{"users":[]}`},
	} {
		f := seenForms[formByName(t, tc.form)]
		if _, ok := f.fast([]byte(tc.body)); !ok {
			t.Errorf("%s %q: not taken by the fast path", tc.form, tc.body)
			continue
		}
		compareSeenForms(t, []byte(tc.body))
	}
}

// The fast path fills the request exactly: a spot check of the values
// behind the comparison with encoding/json.
func TestSeenFastDecodeValues(t *testing.T) {
	var r seenFilterRequest
	if !fastSeenFilterAliased([]byte(`{"candidates":[{"id":"a\tb","doc_id":"d","fingerprint":"00000000000000ff"}],"near":true,"k":4}`), &r, nil) {
		t.Fatal("declined")
	}
	want := seenFilterRequest{Candidates: []seenItem{{ID: "a\tb", DocID: "d", Fingerprint: someFingerprint(fingerprint.Fingerprint(0xff))}}, Near: true, K: new(int)}
	*want.K = 4
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("%+v, want %+v", r, want)
	}
}

// Everything unusual goes to the general decoder, which owns the errors.
func TestSeenFastDecodeDeclines(t *testing.T) {
	for _, body := range []string{
		``, ` `, `null`, `[]`, `{"ids":null}`, `{"IDs":["a"]}`, `{"ids":["a"],"ids":["b"]}`, `{"ids":["\u0041"]}`,
		`{"ids":["a",]}`, `{"ids":["a"],}`, `{"ids":["a"]} {}`, `{"ids":["a"] "near":true}`, `{"ids":[1]}`,
		`{"ids":["a"]`, `{"ids":["a`, "{\"ids\":[\"a\x01\"]}", "{\"ids\":[\"\xff\"]}", `{"ids":["\x"]}`,
		`{"near":1}`, `{"near":null}`, `{"near":tru}`, `{"near":truex}`, `{"k":1.0}`, `{"k":1e0}`, `{"k":01}`,
		`{"k":"1"}`, `{"k":1234567890}`, `{"candidates":[{"id":"a","id":"b"}]}`, `{"candidates":[{"ID":"a"}]}`,
		`{"candidates":[{"id":"a","fingerprint":"xyz"}]}`, `{"candidates":[{"fingerprint":null}]}`,
		`{"candidates":[{"id":"a","extra":1}]}`, `{"candidates":["a"]}`, `{"candidates":null}`, `{"user":"u","ids":[]}`,
		`{"extra":1}`, `{"i\"ds":["a"]}`, `{"answer":null}`, `{"answer":1}`, `{"answer":"kept","answer":"full"}`,
	} {
		for _, f := range seenForms {
			if _, ok := f.fast([]byte(body)); ok {
				t.Errorf("%s %q: taken by the fast path", f.name, body)
			}
		}
	}
	for _, body := range []string{
		`{"users":null}`, `{"users":[],"users":[]}`, `{"users":[{"user":"u","user":"v"}]}`, `{"Users":[]}`,
		`{"users":[{"user":null}]}`, `{"users":[{"user":"u"},]}`, `{"users":[]}x`, `{"users":{}}`, `{"users":[[]]}`,
	} {
		for _, name := range []string{"filter-batch", "check-batch"} {
			if _, ok := seenForms[formByName(t, name)].fast([]byte(body)); ok {
				t.Errorf("%s %q: taken by the fast path", name, body)
			}
		}
	}
}

var seenDecodeSeeds = []string{
	`{"ids":["a","b","0123456789abcdef"]}`,
	`{"candidates":[{"id":"a","doc_id":"d1"},{"id":"b","fingerprint":"0123456789abcdef"}],"near":true,"k":2}`,
	`{ "ids" : [ "x\ty" , "<\"\\\/>" ] , "near" : false , "k" : 0 }`,
	`{"users":[{"user":"u1","ids":["a"]},{"user":"u2","candidates":[{"id":"b","fingerprint":"0x1"}],"near":true}]}`,
	`{"users":[{"user":"u1","ids":["a","b"]},{"ids":[],"user":"u2"}]}`,
	`{"ids":["a","b"],"answer":"indexes"}`,
	`{"answer":"kept","candidates":[{"id":"a"}],"near":true}`,
	`{"users":[{"user":"u1","ids":["a"],"answer":"kept"},{"answer":"full","user":"u2","ids":[]}]}`,
}

// FuzzSeenFastDecode: whatever a fast path accepts, encoding/json (through
// decodeBytes) accepts too and decodes to the same request.
func FuzzSeenFastDecode(f *testing.F) {
	for _, s := range seenDecodeSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"ids":null}`, `{"k":-0}`, `{"users":[]}`, `{"candidates":[{}]}`, `{"ids":["\u00e9"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { compareSeenForms(t, body) })
}

// TestSeenFastDecodeRandom is the fuzz property over seeded random
// mutations of typical bodies (cheap enough for every run).
func TestSeenFastDecodeRandom(t *testing.T) {
	alphabet := []byte("{}[]:,\"\\/ \n\t0123456789-+.eEnulltrfasekbxyzid_x\x01\xff")
	r := rand.New(rand.NewPCG(5, 6))
	accepted := 0
	for i := range 20000 {
		b := mutateJSON(r, []byte(seenDecodeSeeds[i%len(seenDecodeSeeds)]), alphabet)
		if compareSeenForms(t, b) > 0 {
			accepted++
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d mutated bodies took a fast path: the test compares too little", accepted)
	}
	t.Logf("%d of 20000 mutated bodies took a fast path and matched encoding/json", accepted)
}

// A filter of 1,000 ids costs a fixed handful of allocations (the body's
// string, the id list), not one per id.
func TestSeenFastDecodeAllocations(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%016x", i*7919)
	}
	body, err := json.Marshal(map[string]any{"ids": ids})
	if err != nil {
		t.Fatal(err)
	}
	cands := make([]map[string]string, len(ids))
	for i, id := range ids {
		cands[i] = map[string]string{"id": id, "fingerprint": id}
	}
	candBody, err := json.Marshal(map[string]any{"candidates": cands, "near": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body []byte
		max  float64
	}{
		{"ids", body, 3}, // the body's string, the list
		{"candidates with fingerprints", candBody, 20}, // and a fingerprint chunk per 64
	} {
		allocs := testing.AllocsPerRun(20, func() {
			var r seenFilterRequest
			if !fastSeenFilterAliased(tc.body, &r, nil) || len(r.IDs)+len(r.Candidates) != len(ids) {
				t.Fatal("declined")
			}
		})
		if allocs > tc.max {
			t.Errorf("%s: %.0f allocations to decode 1,000 candidates; want at most %.0f", tc.name, allocs, tc.max)
		}
	}
}

// encodeReference is what writeJSON writes for v.
func encodeReference(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzSeenEncode: the direct encoders write exactly the bytes encoding/json
// writes for the response structs, for any strings (escapes, HTML
// characters, invalid UTF-8, U+2028).
func FuzzSeenEncode(f *testing.F) {
	for _, s := range [][3]string{
		{"reader", "0123456789abcdef", "new-1"},
		{"u<&>", "a\"b\\c\n\r\t\b\f\x00\x1f\x7f", "\u2028\u2029é第"},
		{"", "\xff\xfe", "a\xc3"},
	} {
		f.Add(s[0], s[1], s[2], 3, true)
	}
	f.Fuzz(func(t *testing.T, user, a, b string, dist int, near bool) {
		reason := seen.ReasonSeen
		if near {
			reason = seen.ReasonNear
		}
		for _, r := range []seen.FilterResult{
			{Kept: []string{a, b}, Dropped: []seen.Dropped{{Index: 1, ID: b, Reason: reason, Distance: dist}, {Index: -dist, ID: a, Reason: seen.ReasonSeen}}, UnknownDocs: []string{b}},
			{Kept: []string{}, Dropped: nil},
			{Kept: nil, Dropped: []seen.Dropped{{ID: user, Reason: a}}, UnknownDocs: []string{}},
		} {
			if got, want := appendFilterResponse(nil, user, r), encodeReference(t, filterResponse(user, r)); !bytes.Equal(got, want) {
				t.Fatalf("filter:\ngot  %s\nwant %s", got, want)
			}
			for _, form := range []answerForm{answerFull, answerKept, answerIndexes} {
				if got, want := append(appendFilterForm(nil, user, r, form), '\n'), encodeReference(t, referenceForm(user, r, form)); !bytes.Equal(got, want) {
					t.Fatalf("filter form %d:\ngot  %s\nwant %s", form, got, want)
				}
			}
			got := appendBatch(nil, 2, func(buf []byte, i int) []byte { return appendFilterObject(buf, []string{user, a}[i], r) })
			want := encodeReference(t, seenBatchResponse[seenFilterResponse]{Results: []seenFilterResponse{filterResponse(user, r), filterResponse(a, r)}})
			if !bytes.Equal(got, want) {
				t.Fatalf("filter batch:\ngot  %s\nwant %s", got, want)
			}
		}
		// The flags encoder of plain-id filters writes what the result
		// encoder writes for the same answer.
		ids := []string{a, b, user, a}
		for mask := range 16 {
			flags := make([]bool, len(ids))
			r := seen.FilterResult{Kept: []string{}}
			for k := range ids {
				if flags[k] = mask>>k&1 == 1; flags[k] {
					r.Dropped = append(r.Dropped, seen.Dropped{Index: k, ID: ids[k], Reason: seen.ReasonSeen})
				} else {
					r.Kept = append(r.Kept, ids[k])
				}
			}
			for _, form := range []answerForm{answerKept, answerIndexes} {
				if got, want := appendFilterFlags(nil, user, ids, flags, form), appendFilterForm(nil, user, r, form); !bytes.Equal(got, want) {
					t.Fatalf("flags form %d, mask %04b:\ngot  %s\nwant %s", form, mask, got, want)
				}
			}
		}
		for _, s := range [][]bool{{true, false, near}, {}, nil} {
			got := append(appendCheckObject(nil, user, s), '\n')
			if want := encodeReference(t, seenCheckResponse{User: user, Seen: s}); !bytes.Equal(got, want) {
				t.Fatalf("check:\ngot  %s\nwant %s", got, want)
			}
			got = appendBatch(nil, 1, func(buf []byte, _ int) []byte { return appendCheckObject(buf, b, s) })
			if want := encodeReference(t, seenBatchResponse[seenCheckResponse]{Results: []seenCheckResponse{{User: b, Seen: s}}}); !bytes.Equal(got, want) {
				t.Fatalf("check batch:\ngot  %s\nwant %s", got, want)
			}
		}
		if got := appendBatch(nil, 0, nil); !bytes.Equal(got, encodeReference(t, seenBatchResponse[seenCheckResponse]{Results: []seenCheckResponse{}})) {
			t.Fatalf("empty batch: %s", got)
		}
	})
}

// TestAppendJSONStringAllBytes compares every one- and two-byte string
// with encoding/json (all the escape cases and the UTF-8 boundaries).
func TestAppendJSONStringAllBytes(t *testing.T) {
	check := func(s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	for _, s := range []string{"\u2028", "\u2029", "x\u2028y", "\xe2\x80", "\xed\xa0\x80", "\U0010ffff", "\xf4\x90\x80\x80"} {
		check(s)
	}
}

// mutateJSON applies one to three random one-byte edits (replace, insert,
// delete) from alphabet to b, for the fuzz properties that run as unit
// tests.
func mutateJSON(r *rand.Rand, b, alphabet []byte) []byte {
	for range 1 + r.IntN(3) {
		j := r.IntN(len(b))
		switch r.IntN(3) {
		case 0: // replace
			b[j] = alphabet[r.IntN(len(alphabet))]
		case 1: // insert
			b = append(b[:j], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[j:]...)...)
		case 2: // delete
			b = append(b[:j], b[j+1:]...)
		}
		if len(b) == 0 {
			b = []byte("{")
		}
	}
	return b
}
