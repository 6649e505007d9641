package seen

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage/hbasestore"
)

// oracle is the specification: per user, per item, the buckets it was
// marked in and the fingerprint each of those marks left (sticky within a
// bucket: a later mark without a fingerprint keeps it, one with a
// fingerprint replaces it).
type oracle struct {
	users map[string]map[string]map[uint32]oracleMark
}

type oracleMark struct {
	hasFP bool
	fp    uint64
}

func (o *oracle) mark(user, item string, b uint32, fp uint64, hasFP bool) {
	if o.users[user] == nil {
		o.users[user] = map[string]map[uint32]oracleMark{}
	}
	if o.users[user][item] == nil {
		o.users[user][item] = map[uint32]oracleMark{}
	}
	m := o.users[user][item][b]
	if hasFP {
		m = oracleMark{hasFP: true, fp: fp}
	}
	o.users[user][item][b] = m
}

func (o *oracle) seen(user, item string, lo uint32) bool {
	for b := range o.users[user][item] {
		if b >= lo {
			return true
		}
	}
	return false
}

// near returns the smallest distance <= k to a live fingerprint of user.
func (o *oracle) near(user string, fp uint64, k int, lo uint32) int {
	best := -1
	for _, bs := range o.users[user] {
		for b, m := range bs {
			if b < lo || !m.hasFP {
				continue
			}
			if d := bits.OnesCount64(m.fp ^ fp); d <= k && (best < 0 || d < best) {
				best = d
			}
		}
	}
	return best
}

// runOracle drives random mark / check / filter / delete / forget / fold /
// clock steps against s and the oracle, comparing every answer.
func runOracle(t *testing.T, s *Service, clock *fakeClock, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	o := &oracle{users: map[string]map[string]map[uint32]oracleMark{}}
	users := make([]string, 6)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d-%d", seed, i)
	}
	items := make([]string, 40)
	fps := make([]uint64, len(items))
	for i := range items {
		items[i] = fmt.Sprintf("item/%d", i)
		fps[i] = rng.Uint64()
	}
	// Candidates near item i's fingerprint: flip a few bits.
	flip := func(fp uint64, n int) uint64 {
		for range n {
			fp ^= 1 << rng.IntN(64)
		}
		return fp
	}
	cfg := s.Config()
	bk := s.buckets
	// The spec's own expiry, independent of the service's code: bucket b
	// (of width W seconds) is live while its end, (b+1)*W, is after
	// now - Retention; so a mark is kept at least Retention and dropped
	// within Retention + W.
	w := int64(cfg.BucketWidth / time.Second)
	specLo := func(now time.Time) uint32 {
		cut := now.Unix() - int64(cfg.Retention/time.Second)
		lo := int64(0)
		for lo < 1<<32-1 && (lo+1)*w <= cut {
			lo = cut / w // the first b with (b+1)*w > cut
			if (lo+1)*w <= cut {
				lo++
			}
		}
		return uint32(lo)
	}
	var reused FilterResult
	for step := range steps {
		now := clock.Now()
		lo := specLo(now)
		user := users[rng.IntN(len(users))]
		switch op := rng.IntN(100); {
		case op < 35: // mark a few items
			var marks []Mark
			for range 1 + rng.IntN(5) {
				i := rng.IntN(len(items))
				m := Mark{ID: items[i]}
				if rng.IntN(2) == 0 {
					m.Fingerprint, m.HasFingerprint = fingerprint.Fingerprint(fps[i]), true
				}
				marks = append(marks, m)
			}
			if _, err := s.Mark(bg, user, marks); err != nil {
				t.Fatalf("step %d mark: %v", step, err)
			}
			for _, m := range marks {
				o.mark(user, m.ID, bk.Of(now), uint64(m.Fingerprint), m.HasFingerprint)
			}
		case op < 55: // check every item
			got, err := s.Check(bg, user, items)
			if err != nil {
				t.Fatalf("step %d check: %v", step, err)
			}
			for i, it := range items {
				if want := o.seen(user, it, lo); got[i] != want {
					t.Fatalf("step %d: check(%s, %s) = %v, oracle %v", step, user, it, got[i], want)
				}
			}
		case op < 70: // filter with near candidates
			k := rng.IntN(4)
			var cands []Candidate
			for range 10 {
				i := rng.IntN(len(items))
				c := Candidate{ID: items[i]}
				if rng.IntN(3) > 0 {
					c.ID = fmt.Sprintf("other-%d", rng.IntN(1000))
					c.Fingerprint, c.HasFingerprint = fingerprint.Fingerprint(flip(fps[i], rng.IntN(6))), true
				}
				cands = append(cands, c)
			}
			// Every other filter reuses one answer's memory (FilterInto,
			// as the server does): no stale entry may survive.
			var res FilterResult
			var err error
			if step%2 == 0 {
				err = s.FilterInto(bg, FilterRequest{User: user, Candidates: cands, Near: true, K: k}, &reused)
				res = reused
			} else {
				res, err = s.Filter(bg, FilterRequest{User: user, Candidates: cands, Near: true, K: k})
			}
			if err != nil {
				t.Fatalf("step %d filter: %v", step, err)
			}
			var kept []string
			var dropped []Dropped
			for j, c := range cands {
				switch {
				case o.seen(user, c.ID, lo):
					dropped = append(dropped, Dropped{Index: j, ID: c.ID, Reason: ReasonSeen})
				case c.HasFingerprint && o.near(user, uint64(c.Fingerprint), k, lo) >= 0:
					dropped = append(dropped, Dropped{Index: j, ID: c.ID, Reason: ReasonNear, Distance: o.near(user, uint64(c.Fingerprint), k, lo)})
				default:
					kept = append(kept, c.ID)
				}
			}
			if !slices.Equal(res.Kept, kept) || !slices.Equal(res.Dropped, dropped) {
				t.Fatalf("step %d filter(%s, k=%d):\n kept %q dropped %+v\nwant kept %q dropped %+v", step, user, k, res.Kept, res.Dropped, kept, dropped)
			}
		case op < 78: // delete one item
			it := items[rng.IntN(len(items))]
			if err := s.Delete(bg, user, it); err != nil {
				t.Fatalf("step %d delete: %v", step, err)
			}
			delete(o.users[user], it)
		case op < 80: // forget the user
			if err := s.Forget(bg, user); err != nil {
				t.Fatalf("step %d forget: %v", step, err)
			}
			delete(o.users, user)
		case op < 90: // fold one user or all
			var err error
			if rng.IntN(2) == 0 {
				_, err = s.FoldUser(bg, user)
			} else {
				_, err = s.FoldAll(bg)
			}
			if err != nil {
				t.Fatalf("step %d fold: %v", step, err)
			}
		default: // time passes: up to 4 buckets
			clock.Advance(time.Duration(rng.Int64N(int64(4 * cfg.BucketWidth))))
		}
	}
	// A final fold drops every expired bucket and changes no answer.
	lo := specLo(clock.Now())
	if _, err := s.FoldAll(bg); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		got, err := s.Check(bg, u, items)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range items {
			if want := o.seen(u, it, lo); got[i] != want {
				t.Fatalf("after the last fold: check(%s, %s) = %v, oracle %v", u, it, got[i], want)
			}
		}
		row := rowCells(t, s.st, u)
		for _, c := range row.Cells {
			q, err := parseQualifier(c.Qualifier, cfg.HashBits)
			if err != nil {
				t.Fatal(err)
			}
			if q.kind != qualBase && q.kind != qualFPs {
				t.Fatalf("after a fold, user %s still has a %q cell", u, q.kind)
			}
			if q.bucket < lo {
				t.Fatalf("after a fold, user %s still has expired bucket %d (< %d)", u, q.bucket, lo)
			}
		}
	}
}

// TestOracle: random sequences against the map-of-sets oracle on a real
// Pebble store, with a fake clock (buckets of one hour, retention of five).
func TestOracle(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			clock := newClock()
			s := openService(t, openPebble(t), Config{Retention: 5 * time.Hour, BucketWidth: time.Hour, Now: clock.Now})
			runOracle(t, s, clock, seed, 1000)
		})
	}
}

// TestOracleHBase runs the oracle on real HBase (skips without one, fails
// under CI).
func TestOracleHBase(t *testing.T) {
	zk := hbasetest.ZK(t)
	ns := fmt.Sprintf("seen_oracle_%d", time.Now().UnixNano()%1e9)
	st, err := hbasestore.Open(bg, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("closing: %v", err)
		}
	})
	// HBase expires cells by their (bucket) timestamps against the real
	// clock: start the fake one at the real time.
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Hour)}
	s := openService(t, st, Config{Retention: 5 * time.Hour, BucketWidth: time.Hour, Now: clock.Now, Locker: st.Locker()})
	runOracle(t, s, clock, 99, 400)
}
