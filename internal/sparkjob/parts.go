package sparkjob

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Parts cuts each table's row-key space into contiguous key ranges, one
// output part (and one write task) each, numbered in key order: the index
// table's parts first, then the fp, bands and docs tables'. Rows of the
// index, fp and bands tables are uniform (prefixes of fingerprints,
// fingerprints, band hashes), so their ranges are equal cuts of the key
// space; document ids are not, so the docs table is cut at DocBounds,
// sampled from the input's ids by the job.
type Parts struct {
	Index int `json:"index"`
	FP    int `json:"fp"`
	Bands int `json:"bands"`
	// DocBounds are the docs parts' first ids after the first part's,
	// strictly increasing (bytewise): len(DocBounds)+1 docs parts.
	DocBounds []string `json:"doc_bounds"`
}

// Validate reports whether p is usable.
func (p Parts) Validate() error {
	if p.Index < 1 || p.FP < 1 || p.Bands < 1 || p.Index > 1<<16 || p.FP > 1<<16 || p.Bands > 1<<16 || len(p.DocBounds) >= 1<<16 {
		return fmt.Errorf("%w: parts %d/%d/%d/%d: want 1..65536 per table", ErrConfig, p.Index, p.FP, p.Bands, len(p.DocBounds)+1)
	}
	for i := 1; i < len(p.DocBounds); i++ {
		if p.DocBounds[i-1] >= p.DocBounds[i] {
			return fmt.Errorf("%w: doc bounds not strictly increasing at %d", ErrConfig, i)
		}
	}
	return nil
}

// DocBoundsOf picks n-1 bounds that cut sample (ids, in any order, with
// repeats) into n parts of about equal size.
func DocBoundsOf(sample []string, n int) []string {
	s := slices.Clone(sample)
	slices.Sort(s)
	var out []string
	for i := 1; i < n && len(s) > 0; i++ {
		b := s[i*len(s)/n]
		if len(out) == 0 || b > out[len(out)-1] {
			out = append(out, b)
		}
	}
	return out
}

// Total is the number of parts.
func (p Parts) Total() int { return p.Index + p.FP + p.Bands + len(p.DocBounds) + 1 }

// Table is the table whose rows part holds.
func (p Parts) Table(part int) storage.Table {
	switch {
	case part < p.Index:
		return storage.TableIndex
	case part < p.Index+p.FP:
		return storage.TableFP
	case part < p.Index+p.FP+p.Bands:
		return storage.TableBands
	}
	return storage.TableDocs
}

// indexPart is the part of index row (t, prefix) (as bulkload's shards
// cut the row-key space): the row's position (t + prefix/2^P)/T times n.
func (p Parts) indexPart(perms []fingerprint.Permuter, t int, v uint64) int {
	a := v >> (64 - perms[t].PrefixBits) << (64 - perms[t].PrefixBits)
	hi, _ := bits.Mul64(a, uint64(p.Index))
	return int((uint64(t)*uint64(p.Index) + hi) / uint64(len(perms)))
}

// fpPart is the part of fp row fp.
func (p Parts) fpPart(fp uint64) int {
	hi, _ := bits.Mul64(fp, uint64(p.FP))
	return p.Index + int(hi)
}

// bandRows is the number of band indexes a bands row key starts with: the
// LSH bands and the text keys' band.
const bandRows = fingerprint.NumBands + 1

// bandPart is the part of the bands row of a key (band index + hash).
func (p Parts) bandPart(row []byte) (int, error) {
	band, h, err := kvindex.ParseBandRowKey(row)
	if err != nil {
		return 0, err
	}
	band = min(band, bandRows-1)
	hi, _ := bits.Mul64(h, uint64(p.Bands))
	return p.Index + p.FP + int((uint64(band)*uint64(p.Bands)+hi)/bandRows), nil
}

// docPart is the part of the docs row of id.
func (p Parts) docPart(id []byte) int {
	k := sort.Search(len(p.DocBounds), func(i int) bool { return bytes.Compare([]byte(p.DocBounds[i]), id) > 0 })
	return p.Index + p.FP + p.Bands + k
}
