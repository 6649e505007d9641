package fingerprint

import (
	"errors"
	"fmt"
	"slices"
)

// SketchSize is the most values a Sketch holds (bottom-k with k = 64).
const SketchSize = 64

// ErrBadSketch is returned (wrapped) for a sketch that is not sorted,
// repeats a value or is longer than SketchSize.
var ErrBadSketch = errors.New("fingerprint: bad sketch")

// Sketch is a bottom-k MinHash sketch of a document's feature set (the
// distinct words and bigrams its Simhash is built from, without weights):
// the SketchSize smallest 32-bit feature hashes, sorted ascending, no
// repeats. A document with fewer than SketchSize features keeps all of them,
// so for short texts the sketch is the exact feature set and Jaccard between
// two such sketches is exact (up to 32-bit hash collisions).
//
// Why a second signal next to the simhash: simhash compares weight vectors
// by angle and cannot tell which words differ, so on short texts a one-word
// swap (a different fact) lands as close as a near-copy; the sketch counts
// shared features, and, unlike the 64 simhash bits, it keeps working on
// candidates found at a larger distance.
type Sketch []uint32

// sketchValue is the sketch hash of a feature: the high 32 bits of its
// xxhash64 (the low bits pick simhash bits; either half is uniform).
func sketchValue(h uint64) uint32 { return uint32(h >> 32) }

// buildSketch returns the bottom-SketchSize sketch of the feature hashes.
// buf is scratch space (returned for reuse); the sketch is a fresh slice.
func buildSketch(feats []feature, buf []uint32) (Sketch, []uint32) {
	n := len(feats)
	// For long documents sort only the values under a threshold that keeps
	// about 2*SketchSize of uniform hashes (sorting every feature would cost
	// ~10% of a fingerprint); if it kept too few, sort everything.
	lim := uint64(1)<<32 - 1
	if n > 4*SketchSize {
		lim = (uint64(1) << 32) / uint64(n) * 2 * SketchSize
	}
	for {
		buf = buf[:0]
		for i := range feats {
			if v := sketchValue(feats[i].hash); uint64(v) <= lim {
				buf = append(buf, v)
			}
		}
		slices.Sort(buf)
		buf = slices.Compact(buf)
		if len(buf) >= SketchSize || lim == uint64(1)<<32-1 {
			break
		}
		lim = uint64(1)<<32 - 1
	}
	return Sketch(slices.Clone(buf[:min(len(buf), SketchSize)])), buf
}

// Validate reports whether s is a well-formed sketch: at most SketchSize
// values, strictly ascending.
func (s Sketch) Validate() error {
	if len(s) > SketchSize {
		return fmt.Errorf("%w: %d values > %d", ErrBadSketch, len(s), SketchSize)
	}
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return fmt.Errorf("%w: value %d not above the one before", ErrBadSketch, i)
		}
	}
	return nil
}

// Jaccard estimates the Jaccard similarity |A ∩ B| / |A ∪ B| of the feature
// sets two sketches were built from, with the bottom-k estimator: among the
// k = min(SketchSize, |a ∪ b|) smallest values of a ∪ b (which are exactly
// the k smallest hashes of A ∪ B), the share present in both. It is exact
// when both sets have fewer than SketchSize features; otherwise its standard
// error is about sqrt(J(1-J)/SketchSize) (0.06 at J = 0.5, 0.04 at J = 0.9).
// Two empty sketches give 0 (nothing is known to be shared). Both sketches
// must be valid (Validate); Jaccard does not check.
func Jaccard(a, b Sketch) float64 {
	k, _, both := sample(a, b)
	if k == 0 {
		return 0
	}
	return float64(both) / float64(k)
}

// Containment estimates |A ∩ B| / |A| (how much of a's set b holds), with
// the same sample as Jaccard: among the k smallest values of a ∪ b, those
// in both over those in a. It serves truncations and excerpts (a is the
// shorter text). Empty a gives 0.
func Containment(a, b Sketch) float64 {
	_, inA, both := sample(a, b)
	if inA == 0 {
		return 0
	}
	return float64(both) / float64(inA)
}

// sample counts the sample Jaccard and Containment estimate from: the k
// smallest values of a ∪ b (k is SketchSize when a sketch is full, else
// the whole union), those of them in a, and those in both.
func sample(a, b Sketch) (k, inA, both int) {
	// The k smallest of a ∪ b can only include values up to the smaller of
	// the two maxima when a sketch is full: above it, the full sketch has
	// dropped values. Merge and stop after k union values.
	full := len(a) == SketchSize || len(b) == SketchSize
	i, j := 0, 0
	for (i < len(a) || j < len(b)) && (!full || k < SketchSize) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			inA++
			i++
		case i == len(a) || b[j] < a[i]:
			j++
		default:
			both++
			inA++
			i++
			j++
		}
		k++
	}
	return k, inA, both
}

// SketchValues returns the sketch values (the values a Sketch samples) of
// every feature of normalized text, sorted ascending, distinct: for a part
// of a document's normalized text (Result.Text), the values its features
// contribute to the document's sketch. The decision rule drops the values
// of a query's template sentences from both sketches it compares. A bigram
// that spans the part's edge in the whole text is not among them.
func (f *Fingerprinter) SketchValues(text string) []uint32 {
	s := f.scratch.Get().(*scratch)
	defer f.scratch.Put(s)
	s.reset()
	s.leadLeft = 0
	f.extract(s, text)
	out := make([]uint32, 0, len(s.feats))
	for i := range s.feats {
		out = append(out, sketchValue(s.feats[i].hash))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
