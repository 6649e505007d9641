package compaction

import (
	"cmp"
	"errors"
	"slices"
	"testing"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

const rbits = 48

func baseCells(t *testing.T, bucket uint32, maxCell int, rs ...uint64) []kvindex.IndexCell {
	t.Helper()
	vals, err := storage.EncodeBaseSet(rs, rbits, maxCell)
	if err != nil {
		t.Fatal(err)
	}
	var out []kvindex.IndexCell
	for i, v := range vals {
		out = append(out, kvindex.IndexCell{Kind: kvindex.BaseCell, Bucket: bucket, Chunk: i, Value: v, Size: 7 + len(v)})
	}
	return out
}

func delta(b uint32, r uint64) kvindex.IndexCell {
	return kvindex.IndexCell{Kind: kvindex.DeltaCell, Bucket: b, Residual: r, Size: 13}
}

func tomb(r uint64) kvindex.IndexCell {
	return kvindex.IndexCell{Kind: kvindex.TombstoneCell, Residual: r, Size: 9}
}

// row is an index row of the cells, in stored order (base-set chunks, then
// deltas, then tombstones).
func row(cells ...[]kvindex.IndexCell) kvindex.IndexRow {
	r := kvindex.IndexRow{Key: []byte{0, 1, 2}, ResidualBits: rbits}
	for _, c := range cells {
		r.Cells = append(r.Cells, c...)
	}
	slices.SortFunc(r.Cells, func(a, b kvindex.IndexCell) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Chunk, b.Chunk), cmp.Compare(a.Residual, b.Residual))
	})
	return r
}

func TestFoldRow(t *testing.T) {
	const big = 64 << 10
	liveSet := func(rs ...uint64) func(uint64) (bool, error) {
		return func(r uint64) (bool, error) { return slices.Contains(rs, r), nil }
	}
	tests := []struct {
		name    string
		row     kvindex.IndexRow
		cutoff  uint32
		maxCell int
		live    func(uint64) (bool, error)
		want    map[uint32][]uint64 // bucket -> new set (nil: bucket deleted)
		deletes int
		applied int
		kept    int
		dropped int
	}{
		{name: "deltas into empty bucket", row: row([]kvindex.IndexCell{delta(5, 9), delta(5, 3)}),
			want: map[uint32][]uint64{5: {3, 9}}, deletes: 2},
		{name: "deltas merge with base, duplicates once", row: row(baseCells(t, 5, big, 1, 4, 9), []kvindex.IndexCell{delta(5, 4), delta(5, 7), delta(6, 1)}),
			want: map[uint32][]uint64{5: {1, 4, 7, 9}, 6: {1}}, deletes: 3},
		{name: "valid tombstone removes from every bucket and delta", row: row(baseCells(t, 5, big, 1, 4), baseCells(t, 6, big, 4, 8), []kvindex.IndexCell{delta(7, 4), tomb(4)}),
			live: liveSet(), want: map[uint32][]uint64{5: {1}, 6: {8}, 7: {}}, deletes: 2, applied: 1},
		{name: "tombstone of a live fingerprint is kept", row: row(baseCells(t, 5, big, 1, 4), []kvindex.IndexCell{tomb(4)}),
			live: liveSet(4), want: map[uint32][]uint64{}, kept: 1},
		{name: "expired buckets dropped with their deltas", row: row(baseCells(t, 2, big, 1), baseCells(t, 9, big, 2), []kvindex.IndexCell{delta(3, 5), delta(9, 3)}),
			cutoff: 5, want: map[uint32][]uint64{2: nil, 9: {2, 3}}, deletes: 2, dropped: 1},
		{name: "nothing to do", row: row(baseCells(t, 5, big, 1, 2, 3)), want: map[uint32][]uint64{}},
		{name: "oversize chunks re-cut", row: row(baseCells(t, 5, big, seq(0, 200)...)), maxCell: 128,
			want: map[uint32][]uint64{5: seq(0, 200)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.maxCell == 0 {
				tc.maxCell = big
			}
			if tc.live == nil {
				tc.live = func(uint64) (bool, error) { t.Fatal("live called without tombstones"); return false, nil }
			}
			p, err := foldRow(tc.row, tc.cutoff, tc.maxCell, tc.live)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.sets) != len(tc.want) {
				t.Fatalf("rewrites %d buckets, want %d (%v)", len(p.sets), len(tc.want), p.sets)
			}
			for b, want := range tc.want {
				got, ok := p.sets[b]
				if !ok {
					t.Fatalf("bucket %d not rewritten", b)
				}
				if len(got.residuals) != len(want) || !slices.Equal(got.residuals, want) && len(want) > 0 {
					t.Errorf("bucket %d: %v, want %v", b, got.residuals, want)
				}
			}
			if len(p.deletes) != tc.deletes || p.tombstonesApplied != tc.applied || p.tombstonesKept != tc.kept || p.bucketsDropped != tc.dropped {
				t.Errorf("deletes %d applied %d kept %d dropped %d, want %d %d %d %d", len(p.deletes), p.tombstonesApplied, p.tombstonesKept, p.bucketsDropped, tc.deletes, tc.applied, tc.kept, tc.dropped)
			}
			// The "needs work" prefilter agrees with the plan.
			needs := rowNeedsWork(tc.row, tc.cutoff, tc.maxCell)
			if has := len(p.sets) > 0 || len(p.deletes) > 0 || p.tombstonesKept > 0; needs != has {
				t.Errorf("rowNeedsWork = %v, plan has work = %v", needs, has)
			}
		})
	}
}

func seq(from, n uint64) []uint64 {
	// Irregular gaps, so Snappy cannot shrink the cell below the limit.
	out := make([]uint64, n)
	x := from
	for i := range out {
		x += 1 + (uint64(i)*0x9E3779B97F4A7C15)>>40
		out[i] = x
	}
	return out
}

// TestFoldRowCorrupt: a base-set chunk that does not decode and a delta
// wider than the row's residuals are ErrCorrupt (a qualifier that does not
// decode is kvindex.DecodeIndexRow's).
func TestFoldRowCorrupt(t *testing.T) {
	bad := []kvindex.IndexRow{
		row([]kvindex.IndexCell{{Kind: kvindex.BaseCell, Bucket: 1, Value: []byte{1, 2, 3}, Size: 10}}),
		row([]kvindex.IndexCell{delta(1, 1<<50)}),
	}
	for i, r := range bad {
		if _, err := foldRow(r, 0, 1<<16, nil); !errors.Is(err, kvindex.ErrCorrupt) {
			t.Errorf("case %d: err %v, want ErrCorrupt", i, err)
		}
	}
}
