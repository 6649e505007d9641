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
	// Keys, when set (a load into HBase, WithRegions), are the parts'
	// bounds as row keys, and the parts are numbered by them: the cuts
	// above and the regions' boundaries together, so that no part
	// straddles a region (its cells become that region's HFiles).
	Keys *TableKeys `json:"keys,omitempty"`
}

// TableKeys are each table's part bounds: the first row key of every part
// after the table's first, strictly increasing (bytewise).
type TableKeys struct {
	Index [][]byte `json:"index"`
	FP    [][]byte `json:"fp"`
	Bands [][]byte `json:"bands"`
	Docs  [][]byte `json:"docs"`
}

// partTables are the tables of the parts, in the parts' order.
var partTables = [4]storage.Table{storage.TableIndex, storage.TableFP, storage.TableBands, storage.TableDocs}

// of is table t's bounds.
func (k *TableKeys) of(t storage.Table) [][]byte {
	switch t {
	case storage.TableIndex:
		return k.Index
	case storage.TableFP:
		return k.FP
	case storage.TableBands:
		return k.Bands
	}
	return k.Docs
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
	if p.Keys != nil {
		for _, t := range partTables {
			keys := p.Keys.of(t)
			if len(keys) >= 1<<20 {
				return fmt.Errorf("%w: %d %s parts: want at most 2^20", ErrConfig, len(keys)+1, t)
			}
			for i, k := range keys {
				if len(k) == 0 || (i > 0 && bytes.Compare(keys[i-1], k) >= 0) {
					return fmt.Errorf("%w: %s part keys not strictly increasing at %d", ErrConfig, t, i)
				}
			}
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
func (p Parts) Total() int {
	if p.Keys != nil {
		return len(p.Keys.Index) + len(p.Keys.FP) + len(p.Keys.Bands) + len(p.Keys.Docs) + 4
	}
	return p.Index + p.FP + p.Bands + len(p.DocBounds) + 1
}

// base is the number of the first part of table t (Keys set).
func (p Parts) base(t storage.Table) int {
	n := 0
	for _, u := range partTables {
		if u == t {
			break
		}
		n += len(p.Keys.of(u)) + 1
	}
	return n
}

// keyPart is the part of row of table t (Keys set).
func (p Parts) keyPart(t storage.Table, row []byte) int {
	keys := p.Keys.of(t)
	return p.base(t) + sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], row) > 0 })
}

// Table is the table whose rows part holds.
func (p Parts) Table(part int) storage.Table {
	if p.Keys != nil {
		for _, t := range partTables {
			if part -= len(p.Keys.of(t)) + 1; part < 0 {
				return t
			}
		}
		return storage.TableDocs
	}
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

// indexPart is the part of index row (t, prefix) of the permuted
// fingerprint v, whose key is row.
func (p Parts) indexPart(perms []fingerprint.Permuter, t int, v uint64, row []byte) int {
	if p.Keys != nil {
		return p.keyPart(storage.TableIndex, row)
	}
	return p.indexCut(perms, t, v)
}

// indexCut is the uniform cut's part of index row (t, prefix) (as
// bulkload's shards cut the row-key space): the row's position
// (t + prefix/2^P)/T times n.
func (p Parts) indexCut(perms []fingerprint.Permuter, t int, v uint64) int {
	a := v >> (64 - perms[t].PrefixBits) << (64 - perms[t].PrefixBits)
	hi, _ := bits.Mul64(a, uint64(p.Index))
	return int((uint64(t)*uint64(p.Index) + hi) / uint64(len(perms)))
}

// fpPart is the part of fp row fp.
func (p Parts) fpPart(fp uint64) int {
	if p.Keys != nil {
		return p.keyPart(storage.TableFP, kvindex.FPRowKey(fp))
	}
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
	if p.Keys != nil {
		return p.keyPart(storage.TableBands, row), nil
	}
	return p.bandCut(band, h), nil
}

// bandCut is the uniform cut's part of the bands row (band, h).
func (p Parts) bandCut(band int, h uint64) int {
	band = min(band, bandRows-1)
	hi, _ := bits.Mul64(h, uint64(p.Bands))
	return p.Index + p.FP + int((uint64(band)*uint64(p.Bands)+hi)/bandRows)
}

// docPart is the part of the docs row of id.
func (p Parts) docPart(id []byte) int {
	if p.Keys != nil {
		return p.keyPart(storage.TableDocs, id)
	}
	k := sort.Search(len(p.DocBounds), func(i int) bool { return bytes.Compare([]byte(p.DocBounds[i]), id) > 0 })
	return p.Index + p.FP + p.Bands + k
}

// WithRegions returns p numbered by row keys (Keys): each table's cuts
// (the uniform cuts of the index, fp and bands tables, the docs table's
// DocBounds) as the first row key of each part, together with the start
// keys of the table's regions (regions, by table: those after the
// first), so that no part straddles a region. Parts of the uniform cuts
// that hold no possible row vanish.
func (p Parts) WithRegions(perms []fingerprint.Permuter, regions map[storage.Table][][]byte) (Parts, error) {
	if err := p.Validate(); err != nil {
		return p, err
	}
	p.Keys = nil
	var k TableKeys
	for j := 1; j < p.Index; j++ {
		// The first row of the index table whose part is j or later: the
		// table t holding it, then its prefix there.
		for t, pm := range perms {
			last := uint64(1)<<pm.PrefixBits - 1
			at := func(prefix uint64) int { return p.indexCut(perms, t, prefix<<(64-pm.PrefixBits)) }
			if at(last) < j {
				continue
			}
			prefix := firstAtLeast(last, func(x uint64) bool { return at(x) >= j })
			k.Index = append(k.Index, kvindex.IndexRowKey(nil, t, prefix, pm.PrefixBits))
			break
		}
	}
	for j := 1; j < p.FP; j++ {
		fp := firstAtLeast(^uint64(0), func(x uint64) bool { return p.fpPart(x) >= p.Index+j })
		k.FP = append(k.FP, kvindex.FPRowKey(fp))
	}
	for j := 1; j < p.Bands; j++ {
		want := p.Index + p.FP + j
		for band := range bandRows {
			if p.bandCut(band, ^uint64(0)) < want {
				continue
			}
			h := firstAtLeast(^uint64(0), func(x uint64) bool { return p.bandCut(band, x) >= want })
			k.Bands = append(k.Bands, kvindex.BandRowKey(band, h))
			break
		}
	}
	for _, b := range p.DocBounds {
		k.Docs = append(k.Docs, []byte(b))
	}
	for _, t := range partTables {
		keys := append(slices.Clone(k.of(t)), regions[t]...)
		keys = slices.DeleteFunc(keys, func(b []byte) bool { return len(b) == 0 })
		slices.SortFunc(keys, bytes.Compare)
		keys = slices.CompactFunc(keys, bytes.Equal)
		switch t {
		case storage.TableIndex:
			k.Index = keys
		case storage.TableFP:
			k.FP = keys
		case storage.TableBands:
			k.Bands = keys
		default:
			k.Docs = keys
		}
	}
	p.Keys = &k
	return p, p.Validate()
}

// firstAtLeast is the smallest x in [0, last] for which ok, which is
// monotone (false, then true) and true at last.
func firstAtLeast(last uint64, ok func(uint64) bool) uint64 {
	lo, hi := uint64(0), last
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
