package fingerprint

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// The LSH band signature (Bands). Its parameters are part of the recipe:
// changing any of them changes every document's bands, so an index records
// BandsVersion and refuses another.
const (
	// SignatureBins is the number of one-permutation MinHash bins.
	SignatureBins = 128
	// BandRows is the number of bins hashed into one band (r).
	BandRows = 4
	// NumBands is the number of bands (b = SignatureBins / BandRows).
	NumBands = SignatureBins / BandRows
	// BandsVersion names the band recipe (bins, r, b, densification,
	// band hash) for index metadata.
	BandsVersion = "oph128-r4-b32-v1"
)

// ErrBadBands is returned (wrapped) for a band signature of the wrong
// length.
var ErrBadBands = errors.New("fingerprint: bad bands")

// Bands is a document's LSH band signature: NumBands 64-bit band hashes, or
// none. Two documents whose feature sets have Jaccard similarity J share at
// least one band (at the same band index) with probability about
// 1 - (1 - J^BandRows)^NumBands: 0.988 at J = 0.6, 0.9997 at J = 0.7, and
// 5e-6 at J = 0.02 (unrelated texts). The index keeps one cell per band, so
// a lookup finds near-copies whose simhash is too far away for the
// pigeonhole rows (the sketch rule then decides), at the cost of NumBands
// extra row reads and a few false candidates.
//
// How it is built: a one-permutation MinHash (Li, Owen, Zhang 2012) of the
// same distinct features as the Sketch: each feature's 64-bit hash is mixed,
// its top 7 bits pick one of SignatureBins bins and the rest is its value;
// each bin keeps its smallest value. An empty bin borrows the value of the
// first non-empty bin to its right (circularly) with the distance in its top
// bits ("rotation" densification, Shrivastava and Li 2014), which keeps the
// per-bin match probability equal to J. Band i hashes (xxhash64) the band
// index and bins i, i+NumBands, i+2*NumBands, ...: strided rather than
// adjacent bins, because adjacent empty bins of a small set borrow from the
// same neighbour and would make a band no more selective than one bin.
type Bands []uint64

// Validate reports whether b is empty or holds NumBands band hashes
// followed by at most MaxTextKeys text keys (TextKeys).
func (b Bands) Validate() error {
	if len(b) != 0 && (len(b) < NumBands || len(b) > NumBands+MaxTextKeys) {
		return fmt.Errorf("%w: %d band hashes, want 0 or %d..%d", ErrBadBands, len(b), NumBands, NumBands+MaxTextKeys)
	}
	return nil
}

// ValidateQuery is Validate for what a query looks up (QueryBands): up
// to MaxQueryTextKeys text keys.
func (b Bands) ValidateQuery() error {
	if len(b) != 0 && (len(b) < NumBands || len(b) > NumBands+MaxQueryTextKeys) {
		return fmt.Errorf("%w: %d band hashes in a query, want 0 or %d..%d", ErrBadBands, len(b), NumBands, NumBands+MaxQueryTextKeys)
	}
	return nil
}

// LSH returns the LSH band hashes of b (its first NumBands; nil for none).
func (b Bands) LSH() Bands {
	if len(b) < NumBands {
		return nil
	}
	return b[:NumBands:NumBands]
}

// TextKeys returns the text keys after the LSH bands (see TextKeyBand).
func (b Bands) TextKeys() []uint64 {
	if len(b) <= NumBands {
		return nil
	}
	return b[NumBands:]
}

// BandOf is the bands-table band index of b[i]: i for an LSH band,
// TextKeyBand for every text key.
func BandOf(i int) int {
	return min(i, TextKeyBand)
}

// SharesBand reports whether a and b have an equal hash at the same band
// index, or share a text key (false when either is empty).
func SharesBand(a, b Bands) bool {
	if len(a) < NumBands || len(b) < NumBands {
		return false
	}
	for i := range NumBands {
		if a[i] == b[i] {
			return true
		}
	}
	for _, x := range a[NumBands:] {
		for _, y := range b[NumBands:] {
			if x == y {
				return true
			}
		}
	}
	return false
}

// BandCandidateProbability is the chance that two documents with feature
// Jaccard j share a band under NumBands bands of BandRows rows:
// 1 - (1 - j^r)^b (for sets large enough that densification is rare).
func BandCandidateProbability(j float64) float64 {
	p := 1.0
	jr := 1.0
	for range BandRows {
		jr *= j
	}
	for range NumBands {
		p *= 1 - jr
	}
	return 1 - p
}

// signatureCopies is how many times each feature is hashed into the bins.
// Jaccard of the copied sets equals the sets' Jaccard, so each bin still
// matches with probability J; the copies fill the bins of short texts
// (30 features give ~110 non-empty bins instead of ~27), whose bands would
// otherwise mostly borrow the same few values and miss near-copies.
const signatureCopies = 4

// binValueBits is the width of a bin's value; the top bits carry the
// densification distance.
const binValueBits = 57

// mixBand re-mixes a feature hash (the splitmix64 finalizer) so that the
// bin and value bits are independent of the bits the simhash and the
// sketch use.
func mixBand(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// buildBands returns the band signature of the distinct feature hashes
// (nil for none).
func buildBands(feats []feature) Bands {
	var sig minBins
	sig.reset()
	for i := range feats {
		sig.add(feats[i].hash)
	}
	return sig.bands()
}

// minBins is a one-permutation MinHash being built.
type minBins [SignatureBins]uint64

const emptyBin = ^uint64(0)

func (m *minBins) reset() {
	for i := range m {
		m[i] = emptyBin
	}
}

// add hashes one distinct feature into the bins, signatureCopies times.
func (m *minBins) add(h uint64) {
	for c := range uint64(signatureCopies) {
		g := mixBand(h + c*0x9e3779b97f4a7c15)
		b, v := g>>binValueBits, g&(1<<binValueBits-1)
		m[b] = min(m[b], v)
	}
}

// bands densifies the bins and hashes the bands (nil when nothing was
// added).
func (m *minBins) bands() Bands {
	dense, ok := m.densify()
	if !ok {
		return nil
	}
	out := make(Bands, NumBands)
	var buf [1 + 8*BandRows]byte
	for band := range NumBands {
		buf[0] = byte(band)
		for r := range BandRows {
			binary.LittleEndian.PutUint64(buf[1+8*r:], dense[band+r*NumBands])
		}
		out[band] = xxhash.Sum64(buf[:])
	}
	return out
}

// densify returns the bins with every empty bin filled; false when all
// are empty.
func (m *minBins) densify() (dense [SignatureBins]uint64, ok bool) {
	bins := m
	last := SignatureBins - 1
	for last >= 0 && bins[last] == emptyBin {
		last--
	}
	if last < 0 {
		return dense, false
	}
	// Densify right to left: next is the nearest non-empty bin to the
	// right of i (circularly) and dist its distance. Start from the last
	// non-empty bin so the wrap-around is covered in one pass.
	next, dist := bins[last], 0
	for k := range SignatureBins {
		i := (last - k + SignatureBins) % SignatureBins
		if bins[i] != emptyBin {
			next, dist = bins[i], 0
			dense[i] = bins[i]
			continue
		}
		dist++
		dense[i] = next | uint64(dist)<<binValueBits
	}
	return dense, true
}
