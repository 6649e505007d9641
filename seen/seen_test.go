package seen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// TestConcurrentMarksAndFolds: many goroutines mark items for the same
// users while folds run; afterwards every mark is seen (the oracle is the
// set of all marks) and the rows hold folded cells only. Run with -race.
func TestConcurrentMarksAndFolds(t *testing.T) {
	st := openPebble(t)
	// Two Services on one store stand in for two servers: their folds
	// share no in-process lock, so a Locker must serialize them.
	locker := &memLocker{held: map[uint64]bool{}}
	cfg := Config{Locker: locker}
	a, b := openService(t, st, cfg), openService(t, st, cfg)
	users := []string{"u1", "u2", "u3"}
	const writers, perWriter = 8, 60
	ctx, cancel := context.WithCancel(bg)
	var folds sync.WaitGroup
	var foldErr error
	var foldMu sync.Mutex // protects foldErr
	for _, s := range []*Service{a, b} {
		folds.Go(func() {
			for ctx.Err() == nil {
				if _, err := s.FoldAll(ctx); err != nil && ctx.Err() == nil {
					foldMu.Lock()
					foldErr = errors.Join(foldErr, err)
					foldMu.Unlock()
					return
				}
			}
		})
	}
	var marks sync.WaitGroup
	for w := range writers {
		marks.Go(func() {
			s := []*Service{a, b}[w%2]
			for i := range perWriter {
				u := users[i%len(users)]
				id := fmt.Sprintf("w%d-i%d", w, i)
				fp := fingerprint.Fingerprint(uint64(w)<<32 | uint64(i))
				if _, err := s.Mark(bg, u, []Mark{{ID: id, Fingerprint: fp, HasFingerprint: true}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	marks.Wait()
	cancel()
	folds.Wait()
	if foldErr != nil {
		t.Fatal(foldErr)
	}
	if _, err := a.FoldAll(bg); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, u := range users {
		var ids []string
		var cands []Candidate
		for w := range writers {
			for i := range perWriter {
				if users[i%len(users)] == u {
					ids = append(ids, fmt.Sprintf("w%d-i%d", w, i))
					cands = append(cands, Candidate{ID: "new-" + ids[len(ids)-1], Fingerprint: fingerprint.Fingerprint(uint64(w)<<32 | uint64(i) ^ 1), HasFingerprint: true})
				}
			}
		}
		got, err := a.Check(bg, u, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if !ok {
				t.Errorf("user %s: mark %s lost", u, ids[i])
			}
		}
		total += len(ids)
		// Every fingerprint survived too: each candidate is 1 bit away.
		res, err := a.Filter(bg, FilterRequest{User: u, Candidates: cands, Near: true, K: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Kept) != 0 {
			t.Errorf("user %s: %d candidates kept, want all dropped as near (fingerprints lost)", u, len(res.Kept))
		}
		for _, c := range rowCells(t, st, u).Cells {
			if k := c.Qualifier[0]; k != qualBase && k != qualFPs {
				t.Fatalf("user %s: %q cell left after the final fold", u, k)
			}
		}
	}
	if total != writers*perWriter {
		t.Fatalf("checked %d marks, want %d", total, writers*perWriter)
	}
}

// memLocker is an in-memory storage.Locker shared by the Services of one
// test (the HBase store's lease locker is tested in hbasestore).
type memLocker struct {
	mu   sync.Mutex // protects held
	cond *sync.Cond
	held map[uint64]bool
}

func (l *memLocker) Lock(ctx context.Context, names []uint64) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cond == nil {
		l.cond = sync.NewCond(&l.mu)
	}
	for {
		free := true
		for _, n := range names {
			free = free && !l.held[n]
		}
		if free {
			break
		}
		l.cond.Wait()
	}
	for _, n := range names {
		l.held[n] = true
	}
	return func() {
		l.mu.Lock()
		for _, n := range names {
			delete(l.held, n)
		}
		l.cond.Broadcast()
		l.mu.Unlock()
	}, nil
}

// TestFalsePositiveRate: users with 1000 marked items (folded and not);
// 10^6 random absent ids (2*10^5 under -race or -short). No marked id ever reads as unseen, and the false
// positives stay within the collision bound n/2^HashBits per check (at 32
// bits: expected 0.23 in 10^6; at 40 bits: 9e-4). The allowed count is the
// 1e-6 Poisson tail above the expectation.
func TestFalsePositiveRate(t *testing.T) {
	absent := 1_000_000
	if testing.Short() || raceEnabled {
		absent = 200_000
	}
	for _, hb := range []int{32, 40} {
		t.Run(fmt.Sprintf("bits=%d", hb), func(t *testing.T) {
			st := openPebble(t)
			s := openService(t, st, Config{HashBits: hb})
			const users, items = 4, 1000
			for u := range users {
				user := fmt.Sprintf("user%d", u)
				for chunk := range 2 {
					var marks []Mark
					for i := chunk * items / 2; i < (chunk+1)*items/2; i++ {
						marks = append(marks, Mark{ID: fmt.Sprintf("seen-%d-%d", u, i)})
					}
					if _, err := s.Mark(bg, user, marks); err != nil {
						t.Fatal(err)
					}
					if chunk == 0 {
						if _, err := s.FoldUser(bg, user); err != nil {
							t.Fatal(err)
						}
					}
				}
				ids := make([]string, items)
				for i := range ids {
					ids[i] = fmt.Sprintf("seen-%d-%d", u, i)
				}
				got, err := s.Check(bg, user, ids)
				if err != nil {
					t.Fatal(err)
				}
				for i, ok := range got {
					if !ok {
						t.Fatalf("false negative: %s of %s", ids[i], user)
					}
				}
			}
			fps := 0
			ids := make([]string, 1000)
			for n := 0; n < absent; n += len(ids) {
				user := fmt.Sprintf("user%d", n/len(ids)%users)
				for i := range ids {
					ids[i] = fmt.Sprintf("absent-%d", n+i)
				}
				got, err := s.Check(bg, user, ids)
				if err != nil {
					t.Fatal(err)
				}
				for _, ok := range got {
					if ok {
						fps++
					}
				}
			}
			expect := float64(absent) * items / math.Exp2(float64(hb))
			limit := poissonUpper(expect, 1e-6)
			t.Logf("hash bits %d: %d false positives in %d absent ids (rate %.2g; bound %.2g per check, expected %.3g, allowed %d)",
				hb, fps, absent, float64(fps)/float64(absent), items/math.Exp2(float64(hb)), expect, limit)
			if fps > limit {
				t.Fatalf("%d false positives, more than the collision bound allows (%d)", fps, limit)
			}
		})
	}
}

// poissonUpper is the smallest n with P(X > n) < p for X ~ Poisson(mean).
func poissonUpper(mean, p float64) int {
	term := math.Exp(-mean)
	cdf := term
	n := 0
	for 1-cdf >= p {
		n++
		term *= mean / float64(n)
		cdf += term
	}
	return n
}

// TestBadInput: every bad call gets a sentinel error, never a panic; an
// unknown user is an empty set.
func TestBadInput(t *testing.T) {
	s := openService(t, openPebble(t), Config{MaxItems: 10, MaxUsers: 2, Docs: fakeDocs{"doc": 1}})
	long := strings.Repeat("x", MaxIDBytes+1)
	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"empty user", func() error { _, err := s.Check(bg, "", []string{"a"}); return err }, ErrBadUser},
		{"long user", func() error { _, err := s.Check(bg, long, []string{"a"}); return err }, ErrBadUser},
		{"slash user", func() error { _, err := s.Mark(bg, "a/b", []Mark{{ID: "a"}}); return err }, ErrBadUser},
		{"control user", func() error { return s.Forget(bg, "a\x00b") }, ErrBadUser},
		{"bad utf8 user", func() error { return s.Forget(bg, "\xff") }, ErrBadUser},
		{"empty item", func() error { _, err := s.Check(bg, "u", []string{""}); return err }, ErrBadItem},
		{"long item", func() error { _, err := s.Mark(bg, "u", []Mark{{ID: long}}); return err }, ErrBadItem},
		{"control item", func() error { return s.Delete(bg, "u", "a\nb") }, ErrBadItem},
		{"long doc id", func() error { _, err := s.Mark(bg, "u", []Mark{{ID: "a", DocID: long}}); return err }, ErrBadItem},
		{"too many ids", func() error { _, err := s.Check(bg, "u", many); return err }, ErrTooMany},
		{"too many marks", func() error { _, err := s.Mark(bg, "u", make([]Mark, 11)); return err }, ErrTooMany},
		{"too many users", func() error {
			_, err := s.CheckBatch(bg, []CheckRequest{{User: "a"}, {User: "b"}, {User: "c"}})
			return err
		}, ErrTooMany},
		{"no users", func() error { _, err := s.FilterBatch(bg, nil); return err }, ErrBadUser},
		{"k too big", func() error {
			_, err := s.Filter(bg, FilterRequest{User: "u", Candidates: []Candidate{{ID: "a"}}, Near: true, K: 9})
			return err
		}, ErrBadK},
		{"negative k", func() error {
			_, err := s.Filter(bg, FilterRequest{User: "u", Candidates: []Candidate{{ID: "a"}}, Near: true, K: -1})
			return err
		}, ErrBadK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	// Unknown user: nothing seen, everything kept, no error.
	got, err := s.Check(bg, "nobody", []string{"a", "b"})
	if err != nil || got[0] || got[1] {
		t.Fatalf("unknown user: %v %v", got, err)
	}
	res, err := s.Filter(bg, FilterRequest{User: "nobody", Candidates: []Candidate{{ID: "a"}, {ID: "b", DocID: "doc"}, {ID: "c", DocID: "nodoc"}}, Near: true, K: 3})
	if err != nil || len(res.Kept) != 3 {
		t.Fatalf("unknown user filter: %+v %v", res, err)
	}
	// Deleting from and forgetting an unknown user are no-ops.
	if err := s.Delete(bg, "nobody", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(bg, "nobody"); err != nil {
		t.Fatal(err)
	}
	// Unknown document ids are reported, their items still marked.
	mr, err := s.Mark(bg, "u", []Mark{{ID: "a", DocID: "doc"}, {ID: "b", DocID: "nodoc"}})
	if err != nil || mr.Marked != 2 || len(mr.UnknownDocs) != 1 || mr.UnknownDocs[0] != "nodoc" {
		t.Fatalf("mark with doc ids: %+v %v", mr, err)
	}
	// A service without Docs refuses document ids.
	plain := openService(t, openPebble(t), Config{})
	if _, err := plain.Mark(bg, "u", []Mark{{ID: "a", DocID: "doc"}}); !errors.Is(err, ErrBadItem) {
		t.Fatalf("doc id without Docs: %v", err)
	}
}

// TestDocFingerprints: marks and candidates given by document id use the
// fingerprint Docs returns; the document's fingerprint is what near
// filtering compares.
func TestDocFingerprints(t *testing.T) {
	docs := fakeDocs{"story": 0xF0F0_F0F0_0000_FFFF, "copy": 0xF0F0_F0F0_0000_FFFE, "other": 0x0F0F_0F0F_FFFF_0000}
	s := openService(t, openPebble(t), Config{Docs: docs})
	if _, err := s.Mark(bg, "reader", []Mark{{ID: "item-story", DocID: "story"}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Filter(bg, FilterRequest{User: "reader", Near: true, K: 3, Candidates: []Candidate{
		{ID: "item-copy", DocID: "copy"}, {ID: "item-other", DocID: "other"}, {ID: "item-story"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Dropped{{Index: 0, ID: "item-copy", Reason: ReasonNear, Distance: 1}, {Index: 2, ID: "item-story", Reason: ReasonSeen}}
	if fmt.Sprint(res.Kept) != "[item-other]" || fmt.Sprint(res.Dropped) != fmt.Sprint(want) {
		t.Fatalf("filter: %+v", res)
	}
	// Without near, the copy is kept.
	res, err = s.Filter(bg, FilterRequest{User: "reader", Candidates: []Candidate{{ID: "item-copy", DocID: "copy"}}})
	if err != nil || len(res.Kept) != 1 {
		t.Fatalf("filter without near: %+v %v", res, err)
	}
}

// TestExpiry: a mark is kept for at least the retention and gone within
// retention + one bucket; folding drops the bucket's cells.
func TestExpiry(t *testing.T) {
	clock := newClock()
	st := openPebble(t)
	s := openService(t, st, Config{Retention: 24 * time.Hour, BucketWidth: time.Hour, Now: clock.Now})
	if _, err := s.Mark(bg, "u", []Mark{{ID: "a"}}); err != nil {
		t.Fatal(err)
	}
	check := func(want bool) {
		t.Helper()
		got, err := s.Check(bg, "u", []string{"a"})
		if err != nil || got[0] != want {
			t.Fatalf("at %v: seen=%v (%v), want %v", clock.Now(), got, err, want)
		}
	}
	clock.Advance(24*time.Hour - time.Second)
	check(true)
	if _, err := s.FoldAll(bg); err != nil {
		t.Fatal(err)
	}
	check(true)
	clock.Advance(time.Hour + time.Second)
	check(false)
	sum, err := s.FoldAll(bg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.BucketsDropped != 1 || len(rowCells(t, st, "u").Cells) != 0 {
		t.Fatalf("fold after expiry: %+v, row %v", sum, rowCells(t, st, "u"))
	}
}

// TestMetaMismatch: a store written with one hash width refuses another.
func TestMetaMismatch(t *testing.T) {
	st := openPebble(t)
	openService(t, st, Config{HashBits: 40})
	openService(t, st, Config{HashBits: 40})
	if _, err := Open(bg, st, Config{HashBits: 48}); !errors.Is(err, ErrMetaMismatch) {
		t.Fatalf("other hash width: %v", err)
	}
	if _, err := Open(bg, st, Config{BucketWidth: time.Hour}); !errors.Is(err, ErrMetaMismatch) {
		t.Fatalf("other bucket width: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{BucketWidth: 1500 * time.Millisecond},
		{Retention: time.Hour, BucketWidth: 2 * time.Hour},
		{HashBits: 31},
		{HashBits: 65},
		{MaxItems: -1},
		{MaxK: 33},
		{MaxCellBytes: 10},
		{Retention: 20000 * time.Hour, BucketWidth: time.Hour},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	if got := (Config{}).TTL(); got != 31*24*time.Hour {
		t.Fatalf("default TTL %v", got)
	}
}

// TestCorruptCell: an undecodable cell is a kvindex.ErrCorrupt naming the
// table, row and cell, not a panic.
func TestCorruptCell(t *testing.T) {
	st := openPebble(t)
	s := openService(t, st, Config{})
	b := s.buckets.Of(time.Now())
	for _, m := range []storage.Mutation{
		{Kind: storage.Put, Table: storage.TableSeen, Row: RowKey("u"), Qualifier: chunkQualifier(qualBase, b, 0), Value: []byte{9, 9, 9}},
		{Kind: storage.Put, Table: storage.TableSeen, Row: RowKey("v"), Qualifier: []byte("zz"), Value: nil},
	} {
		if err := st.Mutate(bg, []storage.Mutation{m}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"u", "v"} {
		_, err := s.Check(bg, u, []string{"a"})
		var ce *kvindex.CorruptError
		if !errors.Is(err, kvindex.ErrCorrupt) || !errors.As(err, &ce) || ce.Table != storage.TableSeen {
			t.Fatalf("user %s: %v", u, err)
		}
		if _, err := s.FoldUser(bg, u); !errors.Is(err, kvindex.ErrCorrupt) {
			t.Fatalf("fold of user %s: %v", u, err)
		}
	}
}

// TestImport: imported marks land in their buckets' folded cells, merge
// with marks already there (folded or not), skip expired times and refuse
// future ones.
func TestImport(t *testing.T) {
	clock := newClock()
	st := openPebble(t)
	s := openService(t, st, Config{Retention: 10 * time.Hour, BucketWidth: time.Hour, Now: clock.Now})
	now := clock.Now()
	if _, err := s.Mark(bg, "u", []Mark{{ID: "live-delta"}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Import(bg, "u", []TimedMark{
		{Mark{ID: "old"}, now.Add(-20 * time.Hour)},
		{Mark{ID: "h3", Fingerprint: 77, HasFingerprint: true}, now.Add(-3 * time.Hour)},
		{Mark{ID: "h0"}, now},
	})
	if err != nil || res.Marked != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if _, err := s.Import(bg, "u", []TimedMark{{Mark{ID: "future"}, now.Add(time.Hour)}}); !errors.Is(err, ErrBadItem) {
		t.Fatalf("future import: %v", err)
	}
	got, err := s.Check(bg, "u", []string{"live-delta", "old", "h3", "h0"})
	if err != nil || fmt.Sprint(got) != "[true false true true]" {
		t.Fatalf("after import: %v %v", got, err)
	}
	// The import folded the row: the mark's delta it read is folded too
	// (and still seen, above); h3's fingerprint is kept.
	deltas := 0
	for _, c := range rowCells(t, st, "u").Cells {
		if c.Qualifier[0] == qualDelta {
			deltas++
		}
	}
	if deltas != 0 {
		t.Fatalf("%d delta cells after import, want 0", deltas)
	}
	fr, err := s.Filter(bg, FilterRequest{User: "u", Candidates: []Candidate{{ID: "x", Fingerprint: 76, HasFingerprint: true}}, Near: true, K: 1})
	if err != nil || len(fr.Kept) != 0 {
		t.Fatalf("imported fingerprint: %+v %v", fr, err)
	}
	// h3 expires 3 hours before h0.
	clock.Advance(8 * time.Hour)
	got, _ = s.Check(bg, "u", []string{"h3", "h0"})
	if fmt.Sprint(got) != "[false true]" {
		t.Fatalf("after 8h: %v", got)
	}
}
