package ctl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// TestCompactVerb compacts an index with deltas and a deleted document, then
// reopens it: the document left is found, its deltas are gone.
func TestCompactVerb(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openUnsynced(t, dir)
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, fp := range []uint64{0x0123456789abcdef, 0xfedcba9876543210} {
		if _, err := ix.Insert(ctx, kvindex.Document{ID: []string{"a", "b"}[i], Fingerprint: fingerprint.Fingerprint(fp), Time: now}, kvindex.InsertAlways, 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	ix.Close()

	code, out, stderr := run(t, "", "compact", "--data-dir", dir, "--retention", "720h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s map[string]float64
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s["deltas_folded"] != 8 || s["tombstones_applied"] != 4 || s["rows_rewritten"] != 8 {
		t.Errorf("summary %s", out)
	}
	if !strings.Contains(stderr, "compaction") {
		t.Errorf("no summary log line: %s", stderr)
	}

	ix2, err := openExistingIndex(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	res, err := ix2.Lookup(ctx, 0x0123456789abcdef, kvindex.LookupOptions{K: 0})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "a" {
		t.Fatalf("after compact: %v %v", res.Hits, err)
	}
	if res, _ := ix2.Lookup(ctx, 0xfedcba9876543210, kvindex.LookupOptions{K: 0}); len(res.Hits) != 0 {
		t.Errorf("deleted document found: %v", res.Hits)
	}
}

func TestCompactVerbUsage(t *testing.T) {
	for _, args := range [][]string{{"compact"}, {"compact", "--data-dir", "x", "extra"}, {"compact", "--data-dir", "x", "--retention", "-1h"}} {
		if code, _, _ := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, stderr := run(t, "", "compact", "--data-dir", t.TempDir()+"/missing"); code != 1 {
		t.Errorf("missing dir: exit %d (%s)", code, stderr)
	}
}
