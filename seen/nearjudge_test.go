package seen

import (
	"context"
	"slices"
	"testing"

	"github.com/simdex/simdex/fingerprint"
)

// fakeJudge confirms the pairs whose seen fingerprint is in yes and
// records what it was asked.
type fakeJudge struct {
	yes   map[fingerprint.Fingerprint]bool
	asked []NearPair
}

func (f *fakeJudge) ConfirmNear(_ context.Context, pairs []NearPair) ([]bool, error) {
	f.asked = append(f.asked, pairs...)
	out := make([]bool, len(pairs))
	for i, p := range pairs {
		out[i] = f.yes[p.Seen]
	}
	return out, nil
}

// TestNearJudgeDecides: with a NearJudge, a candidate within K of seen
// fingerprints is dropped as near only when the judge confirms one of its
// pairs (and then at the smallest confirmed distance); every seen
// fingerprint within K is put to the judge, seen candidates never are.
func TestNearJudgeDecides(t *testing.T) {
	judge := &fakeJudge{yes: map[fingerprint.Fingerprint]bool{0b1000: true}}
	s := openService(t, openPebble(t), Config{Near: judge})
	marks := []Mark{
		{ID: "a", Fingerprint: 0b0000, HasFingerprint: true},
		{ID: "b", Fingerprint: 0b1000, HasFingerprint: true},
		{ID: "c", Fingerprint: 0xFFFF0000, HasFingerprint: true},
	}
	if _, err := s.Mark(bg, "u", marks); err != nil {
		t.Fatal(err)
	}
	res, err := s.Filter(bg, FilterRequest{User: "u", Near: true, K: 3, Candidates: []Candidate{
		{ID: "x", Fingerprint: 0b0001, HasFingerprint: true},     // 1 from a (refused), 2 from b (confirmed)
		{ID: "y", Fingerprint: 0xFFFF0001, HasFingerprint: true}, // 1 from c (refused)
		{ID: "a", Fingerprint: 0b0000, HasFingerprint: true},     // seen itself
		{ID: "z", Fingerprint: 0xF0F0F0F0, HasFingerprint: true}, // nothing within 3
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Kept, []string{"y", "z"}) {
		t.Errorf("kept %v, want [y z]", res.Kept)
	}
	if len(res.Dropped) != 2 || res.Dropped[0].ID != "x" || res.Dropped[0].Reason != ReasonNear || res.Dropped[0].Distance != 2 ||
		res.Dropped[1].ID != "a" || res.Dropped[1].Reason != ReasonSeen {
		t.Errorf("dropped %+v, want x near at 2, a seen", res.Dropped)
	}
	var seenFPs []fingerprint.Fingerprint
	for _, p := range judge.asked {
		seenFPs = append(seenFPs, p.Seen)
		if p.Distance != fingerprint.Distance(p.Fingerprint, p.Seen) {
			t.Errorf("pair %+v: wrong distance", p)
		}
	}
	slices.Sort(seenFPs)
	if !slices.Equal(seenFPs, []fingerprint.Fingerprint{0b0000, 0b1000, 0xFFFF0000}) {
		t.Errorf("judge asked about %v, want every seen fingerprint within K of an unseen candidate", seenFPs)
	}
}
