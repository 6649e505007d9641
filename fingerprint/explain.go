package fingerprint

import (
	"cmp"
	"math"
	"slices"
)

// FeatureDiff is one feature whose weight differs between two documents.
type FeatureDiff struct {
	Text    string  `json:"text"`
	WeightA float64 `json:"weight_a"` // 0 when the feature is absent from A
	WeightB float64 `json:"weight_b"` // 0 when the feature is absent from B
}

// Comparison explains the distance between two documents.
type Comparison struct {
	A             Result `json:"a"`
	B             Result `json:"b"`
	Distance      int    `json:"distance"`       // Hamming distance of the body simhashes
	TitleDistance int    `json:"title_distance"` // of the title simhashes
	SameExact     bool   `json:"same_exact"`     // normalized bodies are identical
	// Differences lists the features whose weights differ most (by absolute
	// difference, largest first, ties by text): these moved the bits.
	Differences []FeatureDiff `json:"differences"`
}

// Compare fingerprints a and b and lists at most n features whose weights
// differ most between them (n <= 0: all). It is for tools (simdexctl
// distance) and explanations, not the hot path. An error fingerprinting
// either document is returned as is.
func (f *Fingerprinter) Compare(a, b Document, n int) (Comparison, error) {
	ra, fa, err := f.Features(a)
	if err != nil {
		return Comparison{}, err
	}
	rb, fb, err := f.Features(b)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{
		A: ra, B: rb,
		Distance:      Distance(ra.Simhash, rb.Simhash),
		TitleDistance: Distance(ra.TitleSimhash, rb.TitleSimhash),
		SameExact:     ra.ExactHash == rb.ExactHash,
	}
	diffs := make(map[string]*FeatureDiff, len(fa)+len(fb))
	for _, ft := range fa {
		diffs[ft.Text] = &FeatureDiff{Text: ft.Text, WeightA: ft.Weight}
	}
	for _, ft := range fb {
		if d, ok := diffs[ft.Text]; ok {
			d.WeightB = ft.Weight
		} else {
			diffs[ft.Text] = &FeatureDiff{Text: ft.Text, WeightB: ft.Weight}
		}
	}
	for _, d := range diffs {
		if d.WeightA != d.WeightB {
			c.Differences = append(c.Differences, *d)
		}
	}
	slices.SortFunc(c.Differences, func(x, y FeatureDiff) int {
		dx, dy := math.Abs(x.WeightA-x.WeightB), math.Abs(y.WeightA-y.WeightB)
		if dx != dy {
			return cmp.Compare(dy, dx)
		}
		return cmp.Compare(x.Text, y.Text)
	})
	if n > 0 && len(c.Differences) > n {
		c.Differences = c.Differences[:n]
	}
	return c, nil
}
