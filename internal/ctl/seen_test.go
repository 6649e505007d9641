package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/simdex/simdex/seen"
)

// TestSeenVerb: stats count users and items (deltas and folded alike) and
// list the fullest users; fold leaves no delta cells and the same items.
func TestSeenVerb(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openUnsynced(t, dir)
	// A one-hour bucket: the verb must adopt the stored width.
	svc, err := seen.Open(ctx, st, seen.Config{BucketWidth: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for u, n := range map[string]int{"ann": 30, "bob": 5, "cy": 12} {
		var marks []seen.Mark
		for i := range n {
			marks = append(marks, seen.Mark{ID: fmt.Sprint("item-", i)})
		}
		if _, err := svc.Mark(ctx, u, marks); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.FoldUser(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, "ann", "item-0"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	type stats struct {
		Users, Items, Bytes, Tombstones float64
		BytesPerItem                    float64 `json:"bytes_per_item"`
		DeltaCells                      float64 `json:"delta_cells"`
		Fullest                         []struct {
			User  string
			Items int
		}
	}
	get := func() stats {
		t.Helper()
		code, out, stderr := run(t, "", "seen", "stats", "--data-dir", dir, "--top", "2")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var s stats
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return s
	}
	s := get()
	if s.Users != 3 || s.Items != 29+5+12 || len(s.Fullest) != 2 || s.Fullest[0].User != "ann" || s.Fullest[0].Items != 29 || s.Fullest[1].User != "cy" || s.DeltaCells != 17 || s.Tombstones != 1 || s.BytesPerItem <= 0 {
		t.Fatalf("stats before fold: %+v", s)
	}
	code, out, stderr := run(t, "", "seen", "fold", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("fold: exit %d: %s", code, stderr)
	}
	var f map[string]float64
	if err := json.Unmarshal([]byte(out), &f); err != nil || f["rows_folded"] != 3 {
		t.Fatalf("fold summary %s (%v)", out, err)
	}
	s = get()
	if s.Items != 46 || s.DeltaCells != 0 || s.Tombstones != 0 {
		t.Fatalf("stats after fold: %+v", s)
	}
	if code, _, _ := run(t, "", "seen", "stats"); code != 2 {
		t.Fatalf("no store: exit %d, want 2", code)
	}
}
