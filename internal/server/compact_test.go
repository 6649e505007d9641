package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// TestCompactionTimer: with --compact-every the server folds the deltas of
// online inserts into base sets in the background, and stop joins it.
func TestCompactionTimer(t *testing.T) {
	ctx := context.Background()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	fps := []fingerprint.Fingerprint{0x0123456789abcdef, 0x1111222233334444, 0xfedcba9876543210}
	for i, fp := range fps {
		if _, err := ix.Insert(ctx, kvindex.Document{ID: string(rune('a' + i)), Fingerprint: fp}, kvindex.InsertAlways, 3); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.CompactEvery = 20 * time.Millisecond
	stop, err := startCompactor(ctx, cfg, ix, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		deltas := 0
		ix.Store().Scan(ctx, storage.TableIndex, nil, nil, func(r storage.Row) error {
			for _, c := range r.Cells {
				if c.Qualifier[0] == 'd' {
					deltas++
				}
			}
			return nil
		})
		if deltas == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deltas left after 10s of a 20ms compaction timer", deltas)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	for i, fp := range fps {
		res, err := ix.Lookup(ctx, fp, kvindex.LookupOptions{K: 0})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != string(rune('a'+i)) {
			t.Errorf("%s after compaction: %v %v", fp, res.Hits, err)
		}
	}
	if _, err := startCompactor(ctx, Config{CompactEvery: 0}, ix, nil, nil); err != nil {
		t.Error(err)
	}
}
