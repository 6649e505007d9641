package sparkjob

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// sampleRow is a row of one table with its part under the uniform cuts
// (Parts without Keys).
type sampleRow struct {
	row   []byte
	arith int
}

// sampleRows are rows of every table, sorted by key: random ones, and the
// first row of every uniform cut and region with the rows just before.
func sampleRows(p Parts, perms []fingerprint.Permuter, extra map[storage.Table][][]byte) map[storage.Table][]sampleRow {
	r := rand.New(rand.NewPCG(5, 6))
	out := map[storage.Table][]sampleRow{}
	addIndex := func(t int, v uint64) {
		pm := perms[t]
		out[storage.TableIndex] = append(out[storage.TableIndex], sampleRow{kvindex.IndexRowKey(nil, t, pm.Prefix(v), pm.PrefixBits), p.indexCut(perms, t, v)})
	}
	addFP := func(fp uint64) {
		out[storage.TableFP] = append(out[storage.TableFP], sampleRow{kvindex.FPRowKey(fp), p.fpPart(fp)})
	}
	addBand := func(band int, h uint64) {
		out[storage.TableBands] = append(out[storage.TableBands], sampleRow{kvindex.BandRowKey(band, h), p.bandCut(band, h)})
	}
	addDoc := func(id string) {
		out[storage.TableDocs] = append(out[storage.TableDocs], sampleRow{[]byte(id), p.docPart([]byte(id))})
	}
	for range 3000 {
		fp := r.Uint64()
		for t, pm := range perms {
			addIndex(t, pm.Permute(fingerprint.Fingerprint(fp)))
		}
		addFP(fp)
		addBand(r.IntN(bandRows), r.Uint64())
		addDoc(fmt.Sprintf("doc-%d", r.IntN(100)))
	}
	// Rows at and just before every key of the tables' bounds.
	cuts, err := p.WithRegions(perms, extra)
	if err != nil {
		panic(err)
	}
	for _, k := range cuts.Keys.Index {
		if t, prefix, err := kvindex.ParseIndexRowKey(k, layoutBits(perms)); err == nil {
			bits := perms[t].PrefixBits
			addIndex(t, prefix<<(64-bits))
			if prefix > 0 {
				addIndex(t, (prefix-1)<<(64-bits))
			} else if t > 0 {
				addIndex(t-1, ^uint64(0))
			}
		}
	}
	for _, k := range cuts.Keys.FP {
		var b [8]byte
		copy(b[:], k) // a region's start may be shorter than a row key
		if f := binary.BigEndian.Uint64(b[:]); f > 0 {
			addFP(f)
			addFP(f - 1)
		}
	}
	for _, k := range cuts.Keys.Bands {
		if band, h, err := kvindex.ParseBandRowKey(k); err == nil {
			addBand(band, h)
			if h > 0 {
				addBand(band, h-1)
			}
		}
	}
	for _, k := range cuts.Keys.Docs {
		addDoc(string(k))
		addDoc(string(k[:len(k)-1]))
	}
	for t, rows := range out {
		slices.SortFunc(rows, func(a, b sampleRow) int { return bytes.Compare(a.row, b.row) })
		out[t] = slices.CompactFunc(rows, func(a, b sampleRow) bool { return bytes.Equal(a.row, b.row) })
	}
	return out
}

func layoutBits(perms []fingerprint.Permuter) []int {
	var bits []int
	for _, p := range perms {
		bits = append(bits, p.PrefixBits)
	}
	return bits
}

// region is the number of region starts at or before row.
func region(starts [][]byte, row []byte) int {
	n := 0
	for _, s := range starts {
		if len(s) > 0 && bytes.Compare(s, row) <= 0 {
			n++
		}
	}
	return n
}

// TestPartsWithRegions: parts numbered by row keys (a load into HBase)
// refine both the uniform cuts and the regions: two rows in one part are
// in one region and one uniform part; the parts follow key order table by
// table; a region starting where a part starts adds no part, one inside a
// part splits it.
func TestPartsWithRegions(t *testing.T) {
	perms := fingerprint.DefaultLayout.Permuters()
	base := Parts{Index: 5, FP: 3, Bands: 4, DocBounds: []string{"doc-3", "doc-6"}}
	plain, err := base.WithRegions(perms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Total() != base.Total() {
		t.Fatalf("without regions: %d parts, want the uniform cuts' %d", plain.Total(), base.Total())
	}
	cases := []struct {
		name    string
		regions map[storage.Table][][]byte
		more    int // parts beyond the uniform cuts'
	}{
		{"no regions", nil, 0},
		{"one region inside a part of each table", map[storage.Table][][]byte{
			storage.TableIndex: {kvindex.IndexRowKey(nil, 1, 0x1234, perms[1].PrefixBits)},
			storage.TableFP:    {kvindex.FPRowKey(1<<62 + 12345)},
			storage.TableBands: {kvindex.BandRowKey(3, 77)},
			storage.TableDocs:  {[]byte("doc-45")},
		}, 4},
		{"regions where parts start", map[storage.Table][][]byte{
			storage.TableIndex: {plain.Keys.Index[0], plain.Keys.Index[3]},
			storage.TableFP:    {plain.Keys.FP[1]},
			storage.TableBands: {plain.Keys.Bands[2]},
			storage.TableDocs:  {[]byte("doc-3")},
		}, 0},
		{"short keys, the empty start, unsorted", map[storage.Table][][]byte{
			storage.TableIndex: {{3}, {}, {1}},
			storage.TableFP:    {{0x80}, {0x10}},
			storage.TableBands: {{32}},
			storage.TableDocs:  {[]byte("a"), []byte("doc-6"), []byte("z")},
		}, 2 + 2 + 1 + 2},
		{"many regions in one part", map[storage.Table][][]byte{
			storage.TableFP: {kvindex.FPRowKey(1), kvindex.FPRowKey(2), kvindex.FPRowKey(3), kvindex.FPRowKey(4)},
		}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := base.WithRegions(perms, c.regions)
			if err != nil {
				t.Fatal(err)
			}
			if p.Total() != base.Total()+c.more {
				t.Fatalf("%d parts, want %d + %d", p.Total(), base.Total(), c.more)
			}
			rows := sampleRows(base, perms, c.regions)
			seen := map[int]bool{}
			last := -1
			for _, table := range partTables {
				prev := sampleRow{arith: -1}
				prevPart := -1
				for _, r := range rows[table] {
					var part int
					switch table {
					case storage.TableIndex:
						tb, prefix, err := kvindex.ParseIndexRowKey(r.row, layoutBits(perms))
						if err != nil {
							t.Fatal(err)
						}
						part = p.indexPart(perms, tb, prefix<<(64-perms[tb].PrefixBits), r.row)
					case storage.TableFP:
						part = p.fpPart(binary.BigEndian.Uint64(r.row))
					case storage.TableBands:
						if part, err = p.bandPart(r.row); err != nil {
							t.Fatal(err)
						}
					default:
						part = p.docPart(r.row)
					}
					if p.Table(part) != table || part < last {
						t.Fatalf("%s row %x: part %d (table %s) after part %d", table, r.row, part, p.Table(part), last)
					}
					if prevPart == part && (prev.arith != r.arith || region(c.regions[table], prev.row) != region(c.regions[table], r.row)) {
						t.Fatalf("%s rows %x and %x share part %d across a uniform cut or a region boundary", table, prev.row, r.row, part)
					}
					seen[part] = true
					prev, prevPart, last = r, part, part
				}
			}
			if len(seen) < base.Total() {
				t.Fatalf("the sample met %d parts of %d", len(seen), p.Total())
			}
		})
	}
}
