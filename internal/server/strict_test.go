package server

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

// TestOpenAPIPatterns: the patterns of openapi.json's request schemas are
// the ones the server enforces.
func TestOpenAPIPatterns(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Pattern string `json:"pattern"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	for schema, want := range map[string]string{
		"FingerprintInput": fingerprintPattern,
		"Time":             timePattern,
		"DocumentTime":     documentTimePattern,
	} {
		if got := doc.Components.Schemas[schema].Pattern; got != want {
			t.Errorf("%s: pattern %q, the server's is %q", schema, got, want)
		}
	}
}

// TestFingerprintPattern: a fingerprint matches the pattern exactly when
// it is one of the documented forms, and then parses to its value.
func TestFingerprintPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(s string, want uint64, ok bool) {
		t.Helper()
		fp, set, err := parseFingerprintInput(s)
		if ok != (err == nil) || ok && (!set || uint64(fp) != want) {
			t.Errorf("%q: %v %v %v, want %d ok=%v", s, fp, set, err, want, ok)
		}
	}
	for _, v := range []uint64{0, 1, 9, 10, 1<<53 + 1, 1<<63 - 1, 1 << 63, 1<<64 - 1, 1<<64 - 2, 9999999999999999999, 10000000000000000000} {
		s := strconv.FormatUint(v, 10)
		if len(s) != 16 {
			check(s, v, true)
		}
		check("d:"+s, v, true)
		check("0x"+strconv.FormatUint(v, 16), v, true)
		check(fingerprint.Fingerprint(v).String(), v, true)
		check(strings.ToUpper(fingerprint.Fingerprint(v).String()), v, true)
	}
	for _, s := range []string{" 0123456789abcdef", "0123456789abcdef ", "00001", "-1", "+1", "18446744073709551616", "99999999999999999999",
		"d:", "0x", "0x12345678901234567", "0123456789abcdeg", "1.5", "1e3", "d:012", "0123456789abcdef\n"} {
		check(s, 0, false)
	}
	if _, set, err := parseFingerprintInput(""); set || err != nil {
		t.Errorf("empty: %v %v, want none", set, err)
	}
	for i := 0; i < 20000; i++ {
		n := 1 + rng.IntN(21)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('0' + rng.IntN(10))
		}
		if n == 20 && rng.IntN(2) == 0 {
			copy(b, "1844674407370955")
		}
		s := string(b)
		if len(s) == 16 {
			continue // hex
		}
		v, err := strconv.ParseUint(s, 10, 64)
		ok := err == nil && (s == "0" || s[0] != '0')
		check(s, v, ok)
	}
}

// TestTimePattern: every time the pattern takes parses, and the pattern
// refuses what Go's RFC 3339 parse refuses and the times RFC 3339 does not
// allow that it takes.
func TestTimePattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50000; i++ {
		s := fmtTime(rng.IntN(10000), 1+rng.IntN(12), 1+rng.IntN(31), rng.IntN(25), rng.IntN(60), rng.IntN(61), rng.IntN(3), rng.IntN(25)*sign(rng), rng.IntN(60))
		_, perr := time.Parse(time.RFC3339, s)
		if timeRE.MatchString(s) && perr != nil {
			t.Fatalf("%q matches the pattern but does not parse: %v", s, perr)
		}
		if !timeRE.MatchString(s) && perr == nil && !strings.Contains(s, ":60") && !strings.Contains(s, "24:") {
			t.Fatalf("%q parses but does not match the pattern", s)
		}
	}
	for s, ok := range map[string]bool{
		"2024-02-29T00:00:00Z": true, "2023-02-29T00:00:00Z": false, "2000-02-29T00:00:00Z": true, "1900-02-29T00:00:00Z": false,
		"2026-11-23T08:00:00.123456789012Z": true, "2026-11-23t08:00:00Z": false, "2026-11-23T08:00:00z": false,
		"2026-11-23T23:59:60Z": false, "2026-11-23T08:00:00+24:00": false, "2026-11-23T08:00:00-23:59": true, "0000-01-01T00:00:00Z": true,
		"2026-04-31T00:00:00Z": false, "2026-11-23T08:00:00Z\n": false,
	} {
		if timeRE.MatchString(s) != ok {
			t.Errorf("%q: pattern takes it %v, want %v", s, !ok, ok)
		}
		if _, err := parseTime(s); (err == nil) != ok {
			t.Errorf("parseTime(%q): %v", s, err)
		}
	}
	// The document pattern is the time pattern and the written year.
	docRE := regexp.MustCompile(documentTimePattern)
	for y := 0; y < 10000; y++ {
		for _, md := range []string{"01-01", "02-29", "12-31"} {
			s := strconv.Itoa(10000 + y)[1:] + "-" + md + "T12:00:00+05:00"
			want := timeRE.MatchString(s) && y >= minDocYear && y <= maxDocYear
			if docRE.MatchString(s) != want {
				t.Errorf("%q: document pattern takes it %v", s, !want)
			}
		}
	}
}

func sign(rng *rand.Rand) int {
	if rng.IntN(2) == 0 {
		return -1
	}
	return 1
}

func fmtTime(y, mo, d, h, mi, s, zone, zh, zm int) string {
	out := strconv.Itoa(10000 + y)[1:] + "-" + pad2(mo) + "-" + pad2(d) + "T" + pad2(h) + ":" + pad2(mi) + ":" + pad2(s)
	switch zone {
	case 0:
		return out + "Z"
	case 1:
		return out + ".5Z"
	}
	sg := "+"
	if zh < 0 {
		sg, zh = "-", -zh
	}
	return out + sg + pad2(zh) + ":" + pad2(zm)
}

func pad2(n int) string { return strconv.Itoa(100 + n)[1:] }

// TestCheckShape: what encoding/json would let through and the schema does
// not, named by its JSON path.
func TestCheckShape(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		v           any
		kind, field string
	}{
		{"ok", `{"text":"x","k":1,"since":"2026-01-01T00:00:00Z"}`, &checkRequest{}, "", ""},
		{"key case", `{"TEXT":"x"}`, &checkRequest{}, "unknown-field", "TEXT"},
		{"unknown key", `{"text":"x","nope":1}`, &checkRequest{}, "unknown-field", "nope"},
		{"null", `{"text":"x","k":null}`, &checkRequest{}, "invalid-field", "k"},
		{"fraction", `{"text":"x","k":1.0}`, &checkRequest{}, "invalid-field", "k"},
		{"string for int", `{"text":"x","limit":"5"}`, &checkRequest{}, "invalid-field", "limit"},
		{"number fingerprint", `{"fingerprint":123}`, &checkRequest{}, "bad-fingerprint", "fingerprint"},
		{"bad time", `{"text":"x","until":"2026-02-30T00:00:00Z"}`, &checkRequest{}, "invalid-field", "until"},
		{"batch item", `{"items":[{"text":"a"},{"text":"b","Lang":"en"}]}`, &batchCheckRequest{}, "unknown-field", "items[1].Lang"},
		{"seen fingerprint", `{"items":[{"id":"a"},{"id":"b","fingerprint":"xyz"}]}`, &seenMarkRequest{}, "bad-fingerprint", "items[1].fingerprint"},
		{"seen null fingerprint", `{"items":[{"id":"b","fingerprint":null}]}`, &seenMarkRequest{}, "bad-fingerprint", "items[0].fingerprint"},
		{"seen empty fingerprint", `{"items":[{"id":"b","fingerprint":""}]}`, &seenMarkRequest{}, "", ""},
		{"batch user", `{"users":[{"user":"u","ids":["a",1]}]}`, &seenCheckBatchRequest{}, "invalid-field", "users[0].ids[1]"},
		{"attrs", `{"id":"a","text":"x","attrs":{"a":"b","c":2}}`, &documentRequest{}, "invalid-field", "attrs.c"},
		{"escaped key", `{"te\u0078t":"x"}`, &checkRequest{}, "", ""},
		{"malformed", `{"text":`, &checkRequest{}, "malformed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkShape([]byte(tc.body), tc.v)
			switch {
			case tc.kind == "malformed":
				if err != errMalformed {
					t.Fatalf("%v, want errMalformed", err)
				}
			case tc.kind == "":
				if err != nil {
					t.Fatal(err)
				}
			default:
				re, ok := err.(*requestError)
				if !ok || re.kind != tc.kind || re.field != tc.field {
					t.Fatalf("%#v, want %s at %s", err, tc.kind, tc.field)
				}
			}
		})
	}
}

// TestContract: what the server answers where openapi.json is exact about
// it (scripts/openapi/schemathesis.sh checks the whole document).
func TestContract(t *testing.T) {
	e := newSeenEnv(t, nil)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		kind, field              string
	}{
		{"bad fingerprint, check", "POST", "/v1/check", `{"fingerprint":"xyz"}`, 400, "bad-fingerprint", "fingerprint"},
		{"bad fingerprint, seen", "POST", "/v1/users/u1/seen", `{"items":[{"id":"a","fingerprint":"xyz"}]}`, 400, "bad-fingerprint", "items[0].fingerprint"},
		{"bad fingerprint, filter", "POST", "/v1/seen/filter", `{"users":[{"user":"u1","candidates":[{"id":"a","fingerprint":" 0123456789abcdef"}]}]}`, 400, "bad-fingerprint", "users[0].candidates[0].fingerprint"},
		{"lang with a fingerprint", "POST", "/v1/check", `{"fingerprint":"0123456789abcdef","lang":"xx"}`, 400, "invalid-field", "lang"},
		{"null", "POST", "/v1/check", `{"text":"a b c","policy":null}`, 400, "invalid-field", "policy"},
		{"until before since", "POST", "/v1/check", `{"text":"a b c","since":"2026-01-02T00:00:00Z","until":"2026-01-01T00:00:00Z"}`, 200, "", ""},
		{"whitespace", "POST", "/v1/check", `{"text":"  "}`, 422, "empty-document", ""},
		{"document year", "POST", "/v1/documents", `{"id":"a","text":"a b c","time":"1482-01-01T00:00:00Z"}`, 400, "invalid-field", "time"},
		{"both lists", "POST", "/v1/users/u1/seen/filter", `{"candidates":[{"id":"a"}],"ids":[]}`, 400, "invalid-field", "ids"},
		{"seen k without near", "POST", "/v1/users/u1/seen/filter", `{"ids":["a"],"k":9,"answer":"kept"}`, 400, "k-out-of-range", "k"},
		{"seen k", "POST", "/v1/users/u1/seen/filter", `{"ids":["a"],"k":8}`, 200, "", ""},
		{"seen doc_id", "POST", "/v1/users/u1/seen", `{"items":[{"id":"a","doc_id":"x\u0001","fingerprint":"0123456789abcdef"}]}`, 400, "bad-id", "items[0].doc_id"},
		{"seen items required", "POST", "/v1/users/u1/seen", `{}`, 400, "invalid-field", "items"},
		{"seen ids required", "POST", "/v1/users/u1/seen/check", `{}`, 400, "invalid-field", "ids"},
		{"dot user", "POST", "/v1/users/%2E/seen/check", `{"ids":[]}`, 400, "bad-user", "user"},
		{"dot id", "GET", "/v1/documents/%2E%2E", ``, 400, "bad-id", "id"},
		{"slash id", "GET", "/v1/documents/a%2Fb", ``, 404, "not-found", ""},
		{"undeclared method", "GET", "/v1/documents", ``, 405, "method-not-allowed", ""},
		{"batch is not a document", "GET", "/v1/documents/batch", ``, 405, "method-not-allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.kind == "" {
				return
			}
			p := r.problem(t)
			if p.Kind != tc.kind {
				t.Fatalf("kind %s (%s), want %s", p.Kind, r.body, tc.kind)
			}
			if tc.field != "" && (len(p.Errors) != 1 || p.Errors[0].Field != tc.field) {
				t.Fatalf("errors %+v, want field %s", p.Errors, tc.field)
			}
		})
	}
	// A batch's items are answered one by one, with the same kinds.
	var bc batchCheckResponse
	e.do("POST", "/v1/check/batch", `{"items":[{"fingerprint":"xyz"},{"text":"a b c","lang":"xx"},{"fingerprint":"0123456789abcdef"}]}`).json(t, &bc)
	if len(bc.Errors) != 2 || bc.Errors[0].Error.Kind != "bad-fingerprint" || bc.Errors[0].Error.Errors[0].Field != "fingerprint" ||
		bc.Errors[1].Error.Kind != "invalid-field" || bc.Results[2] == nil {
		t.Errorf("batch: %+v", bc)
	}
	// 405 names the methods of openapi.json's path.
	for path, allow := range map[string]string{"/v1/documents": "POST", "/v1/documents/batch": "POST", "/v1/documents/x": "GET, DELETE", "/v1/stats": "GET"} {
		r := e.do("PATCH", path, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != allow {
			t.Errorf("PATCH %s: %d, Allow %q, want 405 with %q", path, r.status, r.header.Get("Allow"), allow)
		}
	}
}

// TestServedOpenAPILimits: a server configured with other limits serves
// them in its document.
func TestServedOpenAPILimits(t *testing.T) {
	if b, err := servedOpenAPI(docLimits{"layout-k": 3, "max-limit": 1000, "max-batch": 1000, "max-users": 1000}); err != nil || &b[0] != &openAPIDocument[0] {
		t.Fatalf("default limits: a new document (%v)", err)
	}
	b, err := servedOpenAPI(docLimits{"layout-k": 5, "max-limit": 50, "max-batch": 20, "max-users": 20})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Maximum  *int `json:"maximum"`
					MaxItems *int `json:"maxItems"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas
	if p := s["CheckRequest"].Properties; *p["k"].Maximum != 5 || *p["limit"].Maximum != 50 {
		t.Errorf("CheckRequest k %d, limit %d", *p["k"].Maximum, *p["limit"].Maximum)
	}
	if p := s["BatchInsertRequest"].Properties; *p["items"].MaxItems != 20 {
		t.Errorf("BatchInsertRequest items %d", *p["items"].MaxItems)
	}
	if p := s["SeenMarkBatchRequest"].Properties; *p["users"].MaxItems != 20 {
		t.Errorf("SeenMarkBatchRequest users %d", *p["users"].MaxItems)
	}
}
