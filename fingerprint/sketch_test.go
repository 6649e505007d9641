package fingerprint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sketchOf builds a sketch from raw 64-bit feature hashes.
func sketchOf(hashes []uint64) Sketch {
	fs := make([]feature, len(hashes))
	for i, h := range hashes {
		fs[i].hash = h
	}
	s, _ := buildSketch(fs, nil)
	return s
}

// exactJaccard is the oracle: Jaccard of the sets of 32-bit sketch values.
func exactJaccard(a, b []uint64) float64 {
	sa, sb := map[uint32]bool{}, map[uint32]bool{}
	for _, h := range a {
		sa[sketchValue(h)] = true
	}
	for _, h := range b {
		sb[sketchValue(h)] = true
	}
	inter := 0
	for v := range sa {
		if sb[v] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// randomPair returns two sets with n shared elements and onlyA, onlyB
// elements of their own.
func randomPair(r *rand.Rand, n, onlyA, onlyB int) (a, b []uint64) {
	for range n {
		h := r.Uint64()
		a, b = append(a, h), append(b, h)
	}
	for range onlyA {
		a = append(a, r.Uint64())
	}
	for range onlyB {
		b = append(b, r.Uint64())
	}
	return a, b
}

func TestSketchExactForSmallSets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ shared, onlyA, onlyB int }{
		{0, 0, 0}, {1, 0, 0}, {10, 2, 3}, {20, 10, 0}, {0, 30, 30}, {60, 2, 2}, {30, 34, 34}, {30, 33, 33},
	} {
		a, b := randomPair(r, tc.shared, tc.onlyA, tc.onlyB)
		sa, sb := sketchOf(a), sketchOf(b)
		if err := sa.Validate(); err != nil {
			t.Fatal(err)
		}
		if len(sa) > SketchSize || len(sb) > SketchSize {
			t.Fatalf("sketch longer than %d", SketchSize)
		}
		if tc.shared+tc.onlyA >= SketchSize || tc.shared+tc.onlyB >= SketchSize {
			continue // a full sketch may have dropped values: an estimate
		}
		if got, want := Jaccard(sa, sb), exactJaccard(a, b); got != want {
			t.Errorf("%+v: Jaccard %v, exact %v", tc, got, want)
		}
		if got, want := Jaccard(sb, sa), exactJaccard(a, b); got != want {
			t.Errorf("%+v: Jaccard not symmetric: %v, exact %v", tc, got, want)
		}
		if tc.shared+tc.onlyA > 0 {
			if got, want := Containment(sa, sb), float64(tc.shared)/float64(tc.shared+tc.onlyA); math.Abs(got-want) > 1e-9 {
				t.Errorf("%+v: Containment %v, exact %v", tc, got, want)
			}
		}
	}
}

// On large random sets the estimate stays within 4 standard errors
// (sqrt(J(1-J)/SketchSize)) of the exact Jaccard, and is unbiased on average.
func TestSketchJaccardErrorBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, j := range []float64{0, 0.1, 0.3, 0.5, 0.7, 0.9, 1} {
		var sumErr float64
		const trials = 60
		for range trials {
			n := 200 + r.IntN(2000)
			shared := int(math.Round(j * float64(n)))
			rest := n - shared
			a, b := randomPair(r, shared, rest/2, rest-rest/2)
			exact := exactJaccard(a, b)
			got := Jaccard(sketchOf(a), sketchOf(b))
			se := math.Sqrt(exact*(1-exact)/SketchSize) + 1e-9
			if math.Abs(got-exact) > 4*se+0.01 {
				t.Errorf("J=%.2f n=%d: estimate %.3f, exact %.3f (4 SE = %.3f)", j, n, got, exact, 4*se)
			}
			sumErr += got - exact
		}
		if bias := sumErr / trials; math.Abs(bias) > 0.02 {
			t.Errorf("J=%.2f: mean error %.3f, want |bias| <= 0.02", j, bias)
		}
	}
}

func TestSketchValidate(t *testing.T) {
	for _, tc := range []struct {
		s  Sketch
		ok bool
	}{
		{nil, true}, {Sketch{1}, true}, {Sketch{1, 2, 9}, true},
		{Sketch{2, 1}, false}, {Sketch{1, 1}, false}, {make(Sketch, SketchSize+1), false},
	} {
		if err := tc.s.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%v) = %v, want ok=%v", tc.s, err, tc.ok)
		}
	}
}

// The sketch a document gets is its feature set's: a copy with one
// paragraph more shares most of it, a different text nothing.
func TestFingerprintSketch(t *testing.T) {
	f := testFP(t)
	base := "The city council approved the new budget for public transport on Monday, adding twelve electric buses and two new routes. " +
		"Officials said the routes would connect the northern suburbs with the central station and the university campus."
	a := mustFP(t, f, Document{Body: base})
	b := mustFP(t, f, Document{Body: base + "\nResidents can comment on the timetable until the end of the month."})
	c := mustFP(t, f, Document{Body: "Heavy rain flooded several streets in the harbour district overnight, and firefighters pumped water from basements until dawn."})
	if err := a.Sketch.Validate(); err != nil || len(a.Sketch) == 0 {
		t.Fatalf("sketch %v: %v", a.Sketch, err)
	}
	if !slices.IsSorted(a.Sketch) {
		t.Fatal("sketch not sorted")
	}
	if j := Jaccard(a.Sketch, a.Sketch); j != 1 {
		t.Errorf("self Jaccard %v, want 1", j)
	}
	if j := Jaccard(a.Sketch, b.Sketch); j < 0.6 || j >= 1 {
		t.Errorf("Jaccard with one sentence added = %.3f, want in [0.6, 1)", j)
	}
	if c := Containment(a.Sketch, b.Sketch); c != 1 {
		t.Errorf("containment of the original in the longer copy = %.3f, want 1", c)
	}
	if j := Jaccard(a.Sketch, c.Sketch); j > 0.05 {
		t.Errorf("Jaccard with an unrelated text = %.3f, want ~0", j)
	}
}

func BenchmarkJaccard(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x, y := randomPair(r, 800, 200, 200)
	sx, sy := sketchOf(x), sketchOf(y)
	for b.Loop() {
		Jaccard(sx, sy)
	}
}
