package kvindex_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// indexRows reads every row of the index table, decoded.
func indexRows(t *testing.T, ix *kvindex.Index) []kvindex.IndexRow {
	t.Helper()
	var rows []kvindex.IndexRow
	err := ix.Store().Scan(bg, storage.TableIndex, nil, nil, func(r storage.Row) error {
		row, err := ix.DecodeIndexRow(r)
		rows = append(rows, row)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestDecodeIndexRow: the rows of inserted, deleted and bulk-written
// fingerprints decode to the cells that place them (a delta or base-set
// residual, and a tombstone, whose Fingerprint is the fingerprint), and a
// row key or qualifier that is not the index's is ErrCorrupt.
func TestDecodeIndexRow(t *testing.T) {
	ix := openIndex(t, fingerprint.Layout{B: 4, K: 3})
	const fpD, fpX, fpB = fingerprint.Fingerprint(0x0123456789abcdef), fingerprint.Fingerprint(0xfedcba9876543210), fingerprint.Fingerprint(0x00ff00ff00ff00ff)
	mustInsert(t, ix, doc("d", fpD, t0), kvindex.InsertAlways)
	mustInsert(t, ix, doc("x", fpX, t0), kvindex.InsertAlways)
	if err := ix.Delete(bg, "x"); err != nil {
		t.Fatal(err)
	}
	err := ix.BulkWriter().BaseSets([]uint64{uint64(fpB)}, ix.Buckets().Of(t0), 100, func(m []storage.Mutation) error { return ix.BulkWriter().Apply(bg, m) })
	if err != nil {
		t.Fatal(err)
	}
	found := map[kvindex.IndexCellKind]map[fingerprint.Fingerprint]int{kvindex.BaseCell: {}, kvindex.DeltaCell: {}, kvindex.TombstoneCell: {}}
	rows := indexRows(t, ix)
	for _, row := range rows {
		p := ix.Layout().Permuters()[row.Table]
		if !slices.Equal(row.Key, kvindex.IndexRowKey(nil, row.Table, row.Prefix, p.PrefixBits)) || row.ResidualBits != 64-p.PrefixBits {
			t.Fatalf("row %x decoded as table %d prefix %x residual bits %d", row.Key, row.Table, row.Prefix, row.ResidualBits)
		}
		for _, c := range row.Cells {
			var rs []uint64
			switch c.Kind {
			case kvindex.BaseCell:
				if rs, err = storage.DecodeBaseSet(nil, c.Value, row.ResidualBits); err != nil {
					t.Fatal(err)
				}
			default:
				rs = []uint64{c.Residual}
			}
			for _, r := range rs {
				found[c.Kind][row.Fingerprint(r)]++
			}
			if c.Kind != kvindex.TombstoneCell && c.Bucket != ix.Buckets().Of(t0) {
				t.Errorf("row %x: cell %+v of bucket %d, want %d", row.Key, c, c.Bucket, ix.Buckets().Of(t0))
			}
		}
	}
	T := ix.Layout().NumTables()
	want := map[kvindex.IndexCellKind]map[fingerprint.Fingerprint]int{
		kvindex.BaseCell:      {fpB: T},
		kvindex.DeltaCell:     {fpD: T, fpX: T},
		kvindex.TombstoneCell: {fpX: T},
	}
	if fmt.Sprint(found) != fmt.Sprint(want) {
		t.Errorf("fingerprints by cell kind %v, want %v", found, want)
	}

	good := rows[0]
	bad := []storage.Row{
		{Key: good.Key, Cells: []storage.Cell{{Qualifier: []byte("q")}}},
		{Key: good.Key, Cells: []storage.Cell{{Qualifier: []byte("b\x00\x00")}}},
		{Key: append(slices.Clone(good.Key), 0), Cells: nil},
		{Key: []byte{9, 1, 2}, Cells: nil},
	}
	for i, r := range bad {
		if _, err := ix.DecodeIndexRow(r); !errors.Is(err, kvindex.ErrCorrupt) {
			t.Errorf("case %d: err %v, want ErrCorrupt", i, err)
		}
	}
	if err := ix.RowWriter().Update(bg, append(slices.Clone(good.Key), 0), func(kvindex.IndexRow, *kvindex.RowUpdate) error {
		t.Error("update of a row key that is not the index's called its function")
		return nil
	}); !errors.Is(err, kvindex.ErrCorrupt) {
		t.Errorf("update of a bad row key: %v, want ErrCorrupt", err)
	}
}

// TestMergeBaseSets: merging into a row that holds a base set of the same
// bucket unions them (its chunks cut anew), a bucket the row lacks gets
// its own base set, and a carried residual's tombstone goes.
func TestMergeBaseSets(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{MaxCellBytes: 256}, false)
	p := ix.Layout().Permuters()[0]
	rbits := 64 - p.PrefixBits
	const prefix = 0x1234
	fpOf := func(r uint64) fingerprint.Fingerprint { return p.Unpermute(p.Join(prefix, r)) }
	row := kvindex.IndexRowKey(nil, 0, prefix, p.PrefixBits)
	b0, b1 := ix.Buckets().Of(t0), ix.Buckets().Of(t0)+1
	var stored, loaded, next []uint64
	for i := range uint64(200) {
		stored = append(stored, i*7919)
		loaded = append(loaded, i*7919+3)
		next = append(next, i*104729+1)
	}
	// The row holds a base set of b0 and a tombstone of loaded[5].
	var muts []storage.Mutation
	put := putFunc(func(r, q, v []byte) error {
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: r, Qualifier: q, Value: v})
		return nil
	})
	if _, _, err := ix.BulkWriter().PutBaseSets(put, row, []kvindex.BucketSet{{Bucket: b0, Residuals: stored}}); err != nil {
		t.Fatal(err)
	}
	muts = append(muts, ix.BulkWriter().Tombstones(fpOf(loaded[5]))...)
	if err := ix.BulkWriter().Apply(bg, muts); err != nil {
		t.Fatal(err)
	}
	written, err := ix.RowWriter().MergeBaseSets(bg, row, []kvindex.BucketSet{{Bucket: b0, Residuals: loaded}, {Bucket: b1, Residuals: next}}, loaded)
	if err != nil || written == 0 {
		t.Fatalf("MergeBaseSets: %d bytes, %v", written, err)
	}
	got := map[uint32][]uint64{}
	for _, r := range indexRows(t, ix) {
		if !slices.Equal(r.Key, row) {
			continue
		}
		for _, c := range r.Cells {
			if c.Kind != kvindex.BaseCell {
				t.Errorf("row keeps cell %+v", c)
				continue
			}
			if got[c.Bucket], err = storage.DecodeBaseSet(got[c.Bucket], c.Value, rbits); err != nil {
				t.Fatal(err)
			}
		}
	}
	union := slices.Sorted(slices.Values(append(slices.Clone(stored), loaded...)))
	if !slices.Equal(got[b0], union) || !slices.Equal(got[b1], next) || len(got) != 2 {
		t.Errorf("base sets after the merge: %d buckets, %d and %d residuals; want 2, %d and %d", len(got), len(got[b0]), len(got[b1]), len(union), len(next))
	}
}
