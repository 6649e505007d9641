package kvindex_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// placedLocker is a memLocker that is also a storage.PlacedLocker: it
// records where the index told it to keep its locks, and refuses the
// separate place when it has none.
type placedLocker struct {
	memLocker
	hasPlace bool
	told     []bool
}

func (l *placedLocker) Separate(separate bool) error {
	l.told = append(l.told, separate)
	if separate && !l.hasPlace {
		return errors.New("no separate place")
	}
	return nil
}

// TestLockPlacement: an index of format 9 (every new one) keeps its locks
// in the Locker's separate place, an older one where its writers always
// did; a new index on a Locker without the place is refused before it
// writes anything.
func TestLockPlacement(t *testing.T) {
	for _, tc := range []struct {
		format string // "" for a new index
		want   bool
	}{{"", true}, {"9", true}, {"8", false}, {"7", false}} {
		t.Run("format "+tc.format, func(t *testing.T) {
			dir := t.TempDir()
			if tc.format != "" {
				ix := openAt(t, dir, kvindex.Config{}, false)
				st := ix.Store()
				muts := []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("format"), Value: []byte(tc.format)}}
				if err := st.Mutate(bg, muts); err != nil {
					t.Fatal(err)
				}
				ix.Close()
			}
			lk := &placedLocker{memLocker: memLocker{names: map[uint64]*sync.Mutex{}}, hasPlace: true}
			ix := openAt(t, dir, kvindex.Config{Locker: lk}, false)
			if len(lk.told) != 1 || lk.told[0] != tc.want {
				t.Fatalf("Separate calls %v, want [%v]", lk.told, tc.want)
			}
			if _, err := ix.Insert(context.Background(), kvindex.Document{ID: "a", Fingerprint: 5}, kvindex.InsertIfUnique, 3); err != nil {
				t.Fatal(err)
			}
			if len(lk.calls) == 0 {
				t.Fatal("insert-if-unique took no lock")
			}
			ix.Close()
		})
	}
	t.Run("new index without the place", func(t *testing.T) {
		dir := t.TempDir()
		lk := &placedLocker{memLocker: memLocker{names: map[uint64]*sync.Mutex{}}}
		if _, err := openErr(dir, kvindex.Config{Locker: lk}); err == nil {
			t.Fatal("a new index opened on a Locker without a separate place")
		}
		if _, err := openErr(dir, kvindex.Config{NoCreate: true}); !errors.Is(err, kvindex.ErrNoIndex) {
			t.Fatalf("after the refusal: %v, want ErrNoIndex (nothing written)", err)
		}
	})
}
