package seen

import (
	"fmt"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
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
	for b.Loop() {
		res, err := s.Filter(bg, FilterRequest{User: "bench-user", Candidates: cands})
		if err != nil || len(res.Dropped) != 250 {
			b.Fatalf("%d dropped, %v", len(res.Dropped), err)
		}
	}
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
