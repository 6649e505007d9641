package ctl

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// TestUpgradeVerb: an index of format 7 becomes format 9 in place and
// keeps its counts (the counters row it wrote is summed with the shards
// inserts write after the upgrade); a second run does nothing; an older
// format and a store without an index are refused and left as they were.
func TestUpgradeVerb(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	// index creates an index, records format, inserts n documents from
	// first through a process that opened it at that format, and closes it.
	index := func(dir, format string, first, n int) {
		t.Helper()
		st := openUnsynced(t, dir)
		ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true})
		if err != nil {
			t.Fatal(err)
		}
		if format != "" {
			if err := st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("format"), Value: []byte(format)}}); err != nil {
				t.Fatal(err)
			}
			ix.Close()
			st = openUnsynced(t, dir)
			if ix, err = kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true}); err != nil {
				t.Fatal(err)
			}
		}
		defer ix.Close()
		for i := first; i < first+n; i++ {
			d := kvindex.Document{ID: fmt.Sprint("d", i), Fingerprint: fingerprint.Fingerprint(uint64(i+1) * 0x9e3779b97f4a7c15), Time: t0}
			if _, err := ix.Insert(ctx, d, kvindex.InsertAlways, 3); err != nil {
				t.Fatal(err)
			}
		}
	}
	stats := func(dir string) (format int, docs int64) {
		t.Helper()
		st := openUnsynced(t, dir)
		ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true, NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		m, _, err := kvindex.ReadMeta(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ix.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m.Format, s.Documents
	}

	dir := t.TempDir()
	index(dir, "7", 0, 5)
	code, out, stderr := run(t, "", "upgrade", "--data-dir", dir)
	if code != 0 || out != "index format 7 -> 9\n" {
		t.Fatalf("exit %d, out %q: %s", code, out, stderr)
	}
	if f, docs := stats(dir); f != kvindex.FormatVersion || docs != 5 {
		t.Fatalf("after the upgrade: format %d, %d documents; want %d, 5", f, docs, kvindex.FormatVersion)
	}
	index(dir, "", 5, 3)
	if f, docs := stats(dir); f != kvindex.FormatVersion || docs != 8 {
		t.Fatalf("after 3 more inserts: format %d, %d documents; want %d, 8", f, docs, kvindex.FormatVersion)
	}
	if code, out, stderr = run(t, "", "upgrade", "--data-dir", dir); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("second run: exit %d, out %q: %s", code, out, stderr)
	}

	old := t.TempDir()
	index(old, "6", 0, 2)
	if code, _, stderr = run(t, "", "upgrade", "--data-dir", old); code != 1 || !strings.Contains(stderr, "rebuild") {
		t.Fatalf("format 6: exit %d: %s", code, stderr)
	}
	if f, docs := stats(old); f != 6 || docs != 2 {
		t.Fatalf("format 6 after a refused upgrade: format %d, %d documents", f, docs)
	}
	if code, _, stderr = run(t, "", "upgrade", "--data-dir", t.TempDir()); code != 1 || !strings.Contains(stderr, "no index") {
		t.Fatalf("empty store: exit %d: %s", code, stderr)
	}
	if code, _, _ = run(t, "", "upgrade"); code != 2 {
		t.Fatalf("no store: exit %d, want 2", code)
	}
}
