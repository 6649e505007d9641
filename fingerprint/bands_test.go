package fingerprint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func bandsOf(hashes []uint64) Bands {
	var m minBins
	m.reset()
	for _, h := range hashes {
		m.add(h)
	}
	return m.bands()
}

// randomPair returns two hash sets with `shared` common elements and
// `only` elements each of their own: Jaccard shared / (shared + 2*only).
func randomHashPair(rng *rand.Rand, shared, only int) (a, b []uint64) {
	for range shared {
		h := rng.Uint64()
		a, b = append(a, h), append(b, h)
	}
	for range only {
		a, b = append(a, rng.Uint64()), append(b, rng.Uint64())
	}
	rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return a, b
}

// TestBandCollisionProbability checks the LSH curve the index relies on:
// over random set pairs of known Jaccard, the share of pairs with a common
// band matches 1 - (1 - J^r)^b within 4 standard errors (plus 0.02 for the
// finite bins), for sets larger than the bins and for short texts' small
// sets (where densification fills most bins).
func TestBandCollisionProbability(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 32))
	const trials = 400
	for _, tc := range []struct {
		name         string
		shared, only int
		slack        float64 // extra tolerance: small sets' densified bins are correlated
	}{
		{"J=0.2 large", 400, 800, 0.02},
		{"J=0.4 large", 400, 300, 0.02},
		{"J=0.5 large", 500, 250, 0.02},
		{"J=0.6 large", 600, 200, 0.02},
		{"J=0.8 large", 800, 100, 0.02},
		{"J=0.5 small", 20, 10, 0.03},
		{"J=0.8 small", 32, 4, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := float64(tc.shared) / float64(tc.shared+2*tc.only)
			want := BandCandidateProbability(j)
			hit := 0
			for range trials {
				a, b := randomHashPair(rng, tc.shared, tc.only)
				if SharesBand(bandsOf(a), bandsOf(b)) {
					hit++
				}
			}
			got := float64(hit) / trials
			se := math.Sqrt(want*(1-want)/trials) + 1e-3
			if math.Abs(got-want) > 4*se+tc.slack {
				t.Errorf("J=%.2f: %d of %d pairs share a band (%.3f), formula %.3f", j, hit, trials, got, want)
			}
			t.Logf("J=%.2f: share a band %.3f, formula %.3f", j, got, want)
		})
	}
}

// TestBandBinMatchRate checks the densified bins themselves: each matches
// with probability J, also for small sets (rotation densification keeps
// it unbiased).
func TestBandBinMatchRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct{ shared, only int }{{300, 100}, {10, 5}, {3, 1}} {
		j := float64(tc.shared) / float64(tc.shared+2*tc.only)
		match, total := 0, 0
		for range 300 {
			a, b := randomHashPair(rng, tc.shared, tc.only)
			da, db := denseBins(a), denseBins(b)
			for i := range da {
				if da[i] == db[i] {
					match++
				}
				total++
			}
		}
		got := float64(match) / float64(total)
		if math.Abs(got-j) > 0.03 {
			t.Errorf("shared %d only %d: bins match at %.3f, Jaccard %.3f", tc.shared, tc.only, got, j)
		}
	}
}

func denseBins(hashes []uint64) [SignatureBins]uint64 {
	var m minBins
	m.reset()
	for _, h := range hashes {
		m.add(h)
	}
	d, _ := m.densify()
	return d
}

func TestBandsDeterministicAndOrderFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, _ := randomHashPair(rng, 50, 0)
	b := slices.Clone(a)
	slices.Reverse(b)
	ba, bb := bandsOf(a), bandsOf(b)
	if !slices.Equal(ba, bb) || len(ba) != NumBands {
		t.Fatalf("bands depend on order or have the wrong length: %d vs %d", len(ba), len(bb))
	}
	if err := ba.Validate(); err != nil {
		t.Fatal(err)
	}
	if bandsOf(nil) != nil {
		t.Error("no features must give no bands")
	}
	// A single feature fills every bin by densification: still NumBands
	// distinct band hashes (the band index is hashed in).
	one := bandsOf([]uint64{42})
	if len(one) != NumBands || len(slices.Compact(slices.Sorted(slices.Values(one)))) != NumBands {
		t.Errorf("one feature: %d bands, want %d distinct", len(one), NumBands)
	}
	if err := (Bands{1, 2}).Validate(); err == nil {
		t.Error("2 band hashes validated")
	}
	if SharesBand(nil, one) || !SharesBand(one, one) {
		t.Error("SharesBand wrong on empty or equal signatures")
	}
}

func TestFingerprintHasBands(t *testing.T) {
	f := testFP(t)
	for _, td := range loadTexts(t) {
		r := mustFP(t, f, td.doc)
		if err := r.Bands.Validate(); err != nil || len(r.Bands) < NumBands || !slices.Equal(r.Bands.TextKeys(), DocTextKeys(r.Text, r.Chars)) {
			t.Errorf("%s (%d chars): %d bands, want %d and the text's DocTextKeys: %v", td.name, r.Chars, len(r.Bands), NumBands, err)
		}
	}
}

func BenchmarkBands(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, _ := randomHashPair(rng, 600, 0)
	for b.Loop() {
		bandsOf(a)
	}
}
