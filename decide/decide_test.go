package decide

import (
	"errors"
	"testing"

	"github.com/simdex/simdex/fingerprint"
)

// seq returns the sketch {from, from+1, ..., from+n-1}.
func seq(from, n uint32) fingerprint.Sketch {
	s := make(fingerprint.Sketch, n)
	for i := range s {
		s[i] = from + uint32(i)
	}
	return s
}

func TestDuplicate(t *testing.T) {
	r := DefaultRule()
	long, short := 1500, 120
	full := seq(0, 40)           // a 40-feature set
	minusOne := seq(0, 37)       // three features fewer: J = 37/40 = 0.925
	swapped := seq(3, 40)        // three replaced: J = 37/43 = 0.86
	half := seq(20, 40)          // J = 20/60 = 0.33
	twoThirds := seq(0, 40)[:27] // J = 27/40 = 0.675
	sixNew := seq(6, 40)         // six replaced: J = 34/46 = 0.74, containment 0.85
	firstHalf := seq(0, 20)      // the first half: contained in full
	for _, tc := range []struct {
		name string
		q, s Side
		d    int
		want bool
	}{
		{"exact content at distance 0", Side{ExactHash: 7}, Side{ExactHash: 7}, 0, true},
		{"no sketch: simhash rule, within", Side{}, Side{Sketch: full, Chars: long}, 3, true},
		{"no sketch: simhash rule, beyond", Side{Sketch: full, Chars: long}, Side{}, 4, false},
		{"long, far but similar sets", Side{Sketch: full, Chars: long}, Side{Sketch: twoThirds, Chars: long}, 8, true},
		{"long, close but dissimilar sets", Side{Sketch: full, Chars: long}, Side{Sketch: half, Chars: long}, 1, false},
		{"short, one word swapped", Side{Sketch: full, Chars: short}, Side{Sketch: swapped, Chars: short}, 2, false},
		{"short, near-identical", Side{Sketch: full, Chars: short}, Side{Sketch: minusOne, Chars: short}, 2, true},
		{"short, near-identical but far", Side{Sketch: full, Chars: short}, Side{Sketch: minusOne, Chars: short}, 5, false},
		{"one side short is short", Side{Sketch: full, Chars: long}, Side{Sketch: sixNew, Chars: short}, 1, false},
		{"excerpt of a long text, far", Side{Sketch: firstHalf, Chars: 100}, Side{Sketch: full, Chars: long}, 30, true},
		{"excerpt too short to judge", Side{Sketch: firstHalf, Chars: 40}, Side{Sketch: full, Chars: long}, 30, false},
		{"contained but not longer enough", Side{Sketch: firstHalf, Chars: 150}, Side{Sketch: full, Chars: 160}, 30, false},
		{"six words new in a short text, close", Side{Sketch: full, Chars: short}, Side{Sketch: sixNew, Chars: 2 * short}, 2, false},
	} {
		if got := r.Duplicate(tc.q, tc.s, tc.d); got != tc.want {
			t.Errorf("%s: Duplicate = %v, want %v (J = %.3f)", tc.name, got, tc.want, fingerprint.Jaccard(tc.q.Sketch, tc.s.Sketch))
		}
		// Under the copy policy every relation counts, so the answer is
		// the same whichever side is the query.
		if got := r.Judge(tc.s, tc.q, tc.d, 64).Duplicate(PolicyCopy); got != tc.want {
			t.Errorf("%s: not symmetric under the copy policy", tc.name)
		}
	}
	if !r.AtAnyDistance(Side{Sketch: firstHalf, Chars: 100}, Side{Sketch: full, Chars: long}) || r.AtAnyDistance(Side{Sketch: full, Chars: short}, Side{Sketch: minusOne, Chars: short}) {
		t.Error("AtAnyDistance: want the excerpt clause, not the short clause")
	}
	if !r.AnyDistance(60) || !r.AnyDistance(40) || !r.AnyDistance(long) {
		t.Error("AnyDistance: band candidates are worth reading for every text (alignment under TextChars, excerpt and Jaccard above)")
	}
	if noText := (Rule{ShortChars: 200, MinContainment: 0.9, ExcerptMinChars: 50, ExcerptRatio: 1.25}); noText.AnyDistance(40) || !noText.AnyDistance(60) {
		t.Error("AnyDistance without the alignment clause: from ExcerptMinChars on")
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultRule().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Rule{
		{FallbackK: -1}, {ShortK: 65}, {ShortChars: -1}, {ShortMinJaccard: 1.5}, {MinJaccard: -0.1},
		{MinContainment: 2}, {ExcerptMinChars: -1}, {MinContainment: 0.9, ExcerptRatio: 0.5},
		{TextChars: -1}, {AlignMinJaccard: 1.1}, {AlignMinCommon: -0.5},
		{TemplateMinDocs: -1}, {TemplateMinDocs: 3, TemplateRatio: 0.5},
		{MaxChangedWords: -1}, {TemplateMinContent: -1}, {ExcerptMinShare: 1.5},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrBadRule) {
			t.Errorf("%+v: Validate = %v, want ErrBadRule", bad, err)
		}
	}
}
