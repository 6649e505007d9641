package seen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

var bg = context.Background()

// fakeClock is a settable clock; safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex // protects t
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// openPebble opens a real Pebble store in a temporary directory, closed
// when the test ends.
func openPebble(t testing.TB) *pebblestore.Store {
	t.Helper()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("closing store: %v", err)
		}
	})
	return st
}

func openService(t testing.TB, st Store, cfg Config) *Service {
	t.Helper()
	s, err := Open(bg, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeDocs is a Docs over a map (unit tests of the logic above Docs).
type fakeDocs map[string]uint64

func (d fakeDocs) Fingerprints(_ context.Context, ids []string) ([]fingerprint.Fingerprint, []bool, error) {
	fps := make([]fingerprint.Fingerprint, len(ids))
	found := make([]bool, len(ids))
	for i, id := range ids {
		v, ok := d[id]
		fps[i], found[i] = fingerprint.Fingerprint(v), ok
	}
	return fps, found, nil
}

// rowCells returns the user's row.
func rowCells(t testing.TB, st Store, user string) storage.Row {
	t.Helper()
	rows, err := st.Get(bg, []storage.RowKey{{Table: storage.TableSeen, Key: RowKey(user)}})
	if err != nil {
		t.Fatal(err)
	}
	return rows[0]
}
