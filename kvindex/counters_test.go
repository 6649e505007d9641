package kvindex_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// storedDocuments sums the documents counter over the counter rows as
// they are in the store (what another process reads).
func storedDocuments(t *testing.T, st storage.Store) int64 {
	t.Helper()
	keys := []storage.RowKey{{Table: storage.TableMeta, Key: []byte("counters")}}
	for s := range kvindex.CounterShards {
		keys = append(keys, storage.RowKey{Table: storage.TableMeta, Key: kvindex.CounterShardRow(s)})
	}
	rows, err := st.Get(bg, keys)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range rows {
		for _, c := range r.Cells {
			if string(c.Qualifier) == "documents" {
				n += int64(binary.BigEndian.Uint64(c.Value))
			}
		}
	}
	return n
}

// TestCounterInterval: with CounterInterval the counter additions of
// inserts and deletes are held in the process and written once per
// interval and at Close; Stats counts them throughout, never one twice,
// and the store has them all once the index is closed.
func TestCounterInterval(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	doc := func(i int) kvindex.Document {
		return kvindex.Document{ID: fmt.Sprint("c", i), Fingerprint: fingerprint.Fingerprint(uint64(i+1) * 0x9e3779b97f4a7c15), Time: t0}
	}
	t.Run("held until close", func(t *testing.T) {
		dir := t.TempDir()
		ix := openAt(t, dir, kvindex.Config{CounterInterval: time.Hour}, true)
		for i := range 10 {
			if _, err := ix.Insert(bg, doc(i), kvindex.InsertAlways, 3); err != nil {
				t.Fatal(err)
			}
		}
		for _, i := range []int{3, 7} {
			if err := ix.Delete(bg, doc(i).ID); err != nil {
				t.Fatal(err)
			}
		}
		if s, err := ix.Stats(bg); err != nil || s.Documents != 8 || s.Fingerprints != 8 {
			t.Fatalf("Stats with additions held: %+v (%v), want 8 documents and fingerprints", s, err)
		}
		if n := storedDocuments(t, ix.Store()); n != 0 {
			t.Fatalf("%d documents in the store's counters before the first write, want 0 (held)", n)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		ix = openAt(t, dir, kvindex.Config{}, true)
		if s, err := ix.Stats(bg); err != nil || s.Documents != 8 || s.Fingerprints != 8 {
			t.Fatalf("Stats after Close wrote them: %+v (%v)", s, err)
		}
	})
	t.Run("written every interval", func(t *testing.T) {
		ix := openAt(t, t.TempDir(), kvindex.Config{CounterInterval: 20 * time.Millisecond}, true)
		// started counts inserts begun, acked those returned: a document's
		// counter addition lands inside Insert, so Stats may count it
		// before its call returns, but never before the call began.
		var started, acked atomic.Int64
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					started.Add(1)
					if _, err := ix.Insert(context.Background(), doc(1000*g+i), kvindex.InsertAlways, 3); err != nil {
						t.Error(err)
						return
					}
					acked.Add(1)
				}
			}()
		}
		// While they run, Stats counts every acknowledged insert and no
		// more than were begun (an addition both written and still held
		// would be counted twice and pass that bound once most are done).
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			low := acked.Load()
			s, err := ix.Stats(bg)
			if err != nil {
				t.Fatal(err)
			}
			if high := started.Load(); s.Documents < low || s.Documents > high {
				t.Fatalf("Stats counts %d documents, want %d acknowledged to %d begun", s.Documents, low, high)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for storedDocuments(t, ix.Store()) != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("store counters %d after the inserts ended, want 200 within the interval", storedDocuments(t, ix.Store()))
			}
			time.Sleep(10 * time.Millisecond)
		}
		if s, err := ix.Stats(bg); err != nil || s.Documents != 200 {
			t.Fatalf("Stats %+v (%v), want 200", s, err)
		}
	})
}
