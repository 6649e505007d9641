package seen

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage/pebblestore"
)

// benchUser loads one user with n items spread over 30 daily buckets
// (folded, as after compaction) and returns 500 candidates, half seen.
func benchUser(b *testing.B, s *Service, n int) []Candidate {
	b.Helper()
	now := time.Now()
	marks := make([]TimedMark, n)
	for j := range marks {
		marks[j] = TimedMark{Mark: Mark{ID: fmt.Sprintf("%016x", j*7919)}, Time: now.Add(-time.Duration(j%30)*24*time.Hour - time.Minute)}
	}
	if _, err := s.Import(bg, "bench-user", marks); err != nil {
		b.Fatal(err)
	}
	cands := make([]Candidate, 500)
	for k := range cands {
		if k%2 == 0 {
			cands[k] = Candidate{ID: marks[k].ID}
		} else {
			cands[k] = Candidate{ID: fmt.Sprintf("new-%d", k)}
		}
	}
	return cands
}

// BenchmarkFilter500: filter 500 candidates for a user with 1000 seen
// items on Pebble (the store-level number of scripts/bench/seen.sh).
func BenchmarkFilter500(b *testing.B) {
	s := openService(b, openPebble(b), Config{})
	cands := benchUser(b, s, 1000)
	cpu0 := processCPU(b)
	for b.Loop() {
		res, err := s.Filter(bg, FilterRequest{User: "bench-user", Candidates: cands})
		if err != nil || len(res.Dropped) != 250 {
			b.Fatalf("%d dropped, %v", len(res.Dropped), err)
		}
	}
	reportCPU(b, cpu0)
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU per op since cpu0, all threads (GC
// included): the figure that stays comparable when other processes share
// the cores, as they do on the development machine.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// BenchmarkMark20: one call marking a page of 20 items (synced write).
func BenchmarkMark20(b *testing.B) {
	s := openService(b, openPebble(b), Config{})
	marks := make([]Mark, 20)
	i := 0
	for b.Loop() {
		for k := range marks {
			marks[k] = Mark{ID: fmt.Sprint("m", i, "-", k)}
		}
		i++
		if _, err := s.Mark(bg, fmt.Sprint("user", i%100), marks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilterNear500: as BenchmarkFilter500, every seen item and
// candidate with a fingerprint and near=true (k=3): 500 x 1000 distances.
func BenchmarkFilterNear500(b *testing.B) {
	s := openService(b, openPebble(b), Config{})
	now := time.Now()
	marks := make([]TimedMark, 1000)
	for j := range marks {
		marks[j] = TimedMark{Mark: Mark{ID: fmt.Sprintf("%016x", j*7919), Fingerprint: fingerprint.Fingerprint(uint64(j) * 0x9E3779B97F4A7C15), HasFingerprint: true},
			Time: now.Add(-time.Duration(j%30)*24*time.Hour - time.Minute)}
	}
	if _, err := s.Import(bg, "bench-user", marks); err != nil {
		b.Fatal(err)
	}
	cands := make([]Candidate, 500)
	for k := range cands {
		cands[k] = Candidate{ID: fmt.Sprint("new-", k), Fingerprint: fingerprint.Fingerprint(uint64(k+5000) * 0xC2B2AE3D27D4EB4F), HasFingerprint: true}
		if k%10 == 0 { // a near-duplicate of a seen item: 2 bits off
			cands[k].Fingerprint = marks[k].Fingerprint ^ 0x11
		}
	}
	for b.Loop() {
		res, err := s.Filter(bg, FilterRequest{User: "bench-user", Candidates: cands, Near: true, K: 3})
		if err != nil || len(res.Dropped) != 50 {
			b.Fatalf("%d dropped, %v", len(res.Dropped), err)
		}
	}
}

// BenchmarkFilter500Users: filter 500 candidates (half seen) for a random
// one of 2,000 users with 1,000 items each over 30 daily buckets, on
// Pebble, with the store's row cache (every row cached after the first
// read, as at 10^4 users in scripts/bench/seen) and without it (every
// filter reads its row from Pebble's block cache, as at 10^5 users, whose
// rows do not fit the row cache).
func BenchmarkFilter500Users(b *testing.B) {
	for _, bc := range []struct {
		name  string
		cache int64
	}{{"rowcache", 0}, {"pebble", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := pebblestore.Open(b.TempDir(), pebblestore.Options{RowCacheBytes: bc.cache})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			s := openService(b, st, Config{})
			const users, items = 2000, 1000
			importUsers(b, s, users, items)
			rng := rand.New(rand.NewPCG(1, 2))
			reqs := make([]FilterRequest, 256)
			for i := range reqs {
				u := rng.IntN(users)
				c := make([]Candidate, 500)
				for k := range c {
					if k%2 == 0 {
						c[k].ID = fmt.Sprintf("%016x", u<<20|rng.IntN(items))
					} else {
						c[k].ID = fmt.Sprintf("new-%x", rng.Uint64())
					}
				}
				reqs[i] = FilterRequest{User: fmt.Sprint("user", u), Candidates: c}
			}
			for _, r := range reqs { // warm the caches
				if _, err := s.Filter(bg, r); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				res, err := s.Filter(bg, reqs[i%len(reqs)])
				if err != nil || len(res.Dropped) < 200 {
					b.Fatalf("%d dropped, %v", len(res.Dropped), err)
				}
				i++
			}
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkFilterFlags500Users: FilterFlags (the call behind the REST
// filter's compact answers) of 500 plain ids, half seen, for a random one
// of 256 users with 1,000 items each over 30 daily buckets, every row in
// the store's row cache (the warm REST case of scripts/bench/seen).
func BenchmarkFilterFlags500Users(b *testing.B) {
	st := openPebble(b)
	s := openService(b, st, Config{})
	const users, items = 256, 1000
	importUsers(b, s, users, items)
	rng := rand.New(rand.NewPCG(1, 2))
	type req struct {
		user string
		ids  []string
	}
	reqs := make([]req, 256)
	for i := range reqs {
		u := rng.IntN(users)
		reqs[i] = req{user: fmt.Sprint("user", u), ids: make([]string, 500)}
		for k := range reqs[i].ids {
			if k%2 == 0 {
				reqs[i].ids[k] = fmt.Sprintf("%016x", u<<20|rng.IntN(items))
			} else {
				reqs[i].ids[k] = fmt.Sprintf("new-%x", rng.Uint64())
			}
		}
	}
	var dst []bool
	for _, r := range reqs { // warm the caches
		var err error
		if dst, err = s.FilterFlags(bg, r.user, r.ids, dst); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	cpu0 := processCPU(b)
	for b.Loop() {
		r := reqs[i%len(reqs)]
		var err error
		if dst, err = s.FilterFlags(bg, r.user, r.ids, dst); err != nil || len(dst) != 500 || !dst[0] {
			b.Fatalf("%d flags, %v", len(dst), err)
		}
		i++
	}
	reportCPU(b, cpu0)
}

// importUsers loads users "user0".. with items ids each ("%016x" of
// user<<20|j), spread over 30 daily buckets, in the folded form.
func importUsers(b *testing.B, s *Service, users, items int) {
	b.Helper()
	now := time.Now()
	marks := make([]TimedMark, items)
	for u := range users {
		for j := range marks {
			marks[j] = TimedMark{Mark: Mark{ID: fmt.Sprintf("%016x", u<<20|j)}, Time: now.Add(-time.Duration(j%30)*24*time.Hour - time.Minute)}
		}
		if _, err := s.Import(bg, fmt.Sprint("user", u), marks); err != nil {
			b.Fatal(err)
		}
	}
}
