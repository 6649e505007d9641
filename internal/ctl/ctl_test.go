package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage/pebblestore"
)

var (
	fpOnce sync.Once
	fp     *fingerprint.Fingerprinter
	fpErr  error
)

func sharedFP() (*fingerprint.Fingerprinter, error) {
	fpOnce.Do(func() { fp, fpErr = fingerprint.New(fingerprint.DefaultConfig()) })
	return fp, fpErr
}

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// No SIMDEX_* variables: scripts/test.sh exports SIMDEX_HBASE_ZK.
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, NewFingerprinter: sharedFP, Getenv: func(string) string { return "" }}
	code = Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

const article = "The European Central Bank raised interest rates again on Thursday, citing stubborn inflation in the services sector. " +
	"Economists had expected the move after wage growth stayed strong through the summer, and markets barely reacted."

// openUnsynced opens an unsynced embedded store in dir, for a test to fill
// before a verb runs on it (the test closes it).
func openUnsynced(t *testing.T, dir string) *pebblestore.Store {
	t.Helper()
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFingerprintVerb(t *testing.T) {
	f, err := sharedFP()
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Fingerprint(fingerprint.Document{Title: "ECB raises rates", Body: article})
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "a.txt", article)
	for _, args := range [][]string{
		{"fingerprint", "--title", "ECB raises rates", path},
		{"fingerprint", path, "--title", "ECB raises rates"}, // flags after the file
		{"fingerprint", "--title", "ECB raises rates", "-"},  // stdin
		{"fingerprint", "--title", "ECB raises rates"},       // stdin by default
	} {
		code, stdout, stderr := run(t, article, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var got FingerprintOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v: output is not JSON: %v\n%s", args, err, stdout)
		}
		if got.Simhash != want.Simhash || got.TitleSimhash != want.TitleSimhash || got.Recipe != fingerprint.RecipeVersion ||
			got.Features != want.Features || got.SimhashDec == "" || len(got.ExactHash) != 16 {
			t.Errorf("%v: got %+v, want simhash %s title %s features %d", args, got, want.Simhash, want.TitleSimhash, want.Features)
		}
		if len(got.Top) == 0 || got.Top[0] != want.Top[0] {
			t.Errorf("%v: top features %v, want first %v", args, got.Top, want.Top[0])
		}
	}
}

func TestDistanceVerb(t *testing.T) {
	a := writeFile(t, "a.txt", article)
	b := writeFile(t, "b.txt", strings.Replace(article, "markets barely reacted", "bond traders cheered loudly", 1))
	code, stdout, stderr := run(t, "", "distance", "--json", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var c fingerprint.Comparison
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if c.Distance != fingerprint.Distance(c.A.Simhash, c.B.Simhash) || c.Distance == 0 || c.SameExact {
		t.Errorf("comparison %+v", c)
	}
	var sawNew bool
	for _, d := range c.Differences {
		if d.Text == "traders" && d.WeightA == 0 && d.WeightB > 0 {
			sawNew = true
		}
	}
	if !sawNew {
		t.Errorf("differences %v lack the new word \"traders\"", c.Differences)
	}

	code, stdout, stderr = run(t, "", "distance", a, a)
	if code != 0 || !strings.Contains(stdout, "distance 0 ") || !strings.Contains(stdout, "exact duplicate: true") {
		t.Errorf("same file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestErrorsAndUsage(t *testing.T) {
	empty := writeFile(t, "empty.txt", "   ")
	tests := []struct {
		args     []string
		code     int
		inStderr string
	}{
		{nil, 2, "verbs:"},
		{[]string{"help"}, 0, "fingerprint"},
		{[]string{"nope"}, 2, "unknown verb"},
		{[]string{"fingerprint", "a", "b"}, 2, "at most one FILE"},
		{[]string{"fingerprint", "--bogus"}, 2, "usage:"},
		{[]string{"fingerprint", "/does/not/exist"}, 1, "no such file"},
		{[]string{"fingerprint", empty}, 1, "empty document"},
		{[]string{"fingerprint", "--lang", "fr", "-"}, 1, "unknown language"},
		{[]string{"distance", empty}, 2, "want two files"},
		{[]string{"distance", empty, empty}, 1, "empty document"},
	}
	for _, tc := range tests {
		code, _, stderr := run(t, article, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.inStderr) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.inStderr)
		}
	}
}
