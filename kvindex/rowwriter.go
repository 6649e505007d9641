package kvindex

import (
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// RowWriter rewrites index rows, each under the row lock inserts and
// deletes take, so that no insert or delete made through this Index
// interleaves between a row's read and its rewrite and no delta or
// tombstone written meanwhile is lost: compaction folds rows with it, bulk
// loads merge base sets into rows that may hold data. It is safe for
// concurrent use.
type RowWriter struct{ ix *Index }

// RowWriter returns the index's RowWriter.
func (ix *Index) RowWriter() *RowWriter { return &ix.rows }

// IndexRow is a row of the index table, decoded: the permutation table and
// prefix whose fingerprints it holds, and its cells.
type IndexRow struct {
	// Key is the stored row key (IndexRowKey).
	Key          []byte
	Table        int
	Prefix       uint64
	ResidualBits int
	// Cells are the row's cells in stored order: base-set chunks (by
	// bucket, then chunk), then deltas (by bucket, then residual), then
	// tombstones (by residual).
	Cells []IndexCell
	perm  fingerprint.Permuter
}

// Fingerprint is the fingerprint whose residual in this row is r.
func (r IndexRow) Fingerprint(residual uint64) fingerprint.Fingerprint {
	return r.perm.Unpermute(r.perm.Join(r.Prefix, residual))
}

// IndexCell is one cell of an index row, decoded.
type IndexCell struct {
	Kind IndexCellKind
	// Bucket is the time bucket of a BaseCell or DeltaCell.
	Bucket uint32
	// Chunk is a BaseCell's chunk number in its bucket's base set.
	Chunk int
	// Residual is what a DeltaCell adds and a TombstoneCell removes.
	Residual uint64
	// Value is a BaseCell's chunk, undecoded (storage.DecodeBaseSet with
	// the row's ResidualBits); empty for the other kinds.
	Value []byte
	// Size is the cell's stored bytes: qualifier and value.
	Size int
}

// DecodeIndexRow decodes a row of the index table (as a scan of
// storage.TableIndex returns it). A row key or qualifier it cannot decode
// is an error wrapping ErrCorrupt that names the cell; base-set chunks are
// left undecoded.
func (ix *Index) DecodeIndexRow(row storage.Row) (IndexRow, error) {
	t, prefix, err := ParseIndexRowKey(row.Key, ix.bits)
	if err != nil {
		return IndexRow{}, corrupt(storage.TableIndex, row.Key, nil, "%v", err)
	}
	r := IndexRow{Key: row.Key, Table: t, Prefix: prefix, ResidualBits: 64 - ix.bits[t], Cells: make([]IndexCell, len(row.Cells)), perm: ix.perms[t]}
	for i, c := range row.Cells {
		q, err := parseIndexQualifier(c.Qualifier)
		if err != nil {
			return IndexRow{}, corrupt(storage.TableIndex, row.Key, c.Qualifier, "%v", err)
		}
		r.Cells[i] = IndexCell{Kind: q.Kind, Bucket: q.Bucket, Chunk: q.Chunk, Residual: q.Residual, Size: len(c.Qualifier) + len(c.Value)}
		if q.Kind == BaseCell {
			r.Cells[i].Value = c.Value
		}
	}
	return r, nil
}

// RowUpdate collects the rewrite of one index row inside RowWriter.Update.
type RowUpdate struct {
	ix     *Index
	row    storage.Row    // as read
	chunks map[uint32]int // base-set chunks per bucket, as read
	muts   []storage.Mutation
}

// SetBaseSet replaces the base set of bucket by residuals (sorted,
// distinct, within the row's residual bits): its chunks are written anew
// and those the row had beyond their number deleted. No residuals deletes
// every chunk of the bucket.
func (u *RowUpdate) SetBaseSet(bucket uint32, residuals []uint64) error {
	m, err := u.ix.baseSetMutations(u.row.Key, bucket, residuals, u.chunks[bucket])
	if err != nil {
		return err
	}
	u.muts = append(u.muts, m...)
	return nil
}

// Delete deletes a delta or tombstone cell of the row (base-set chunks
// change through SetBaseSet).
func (u *RowUpdate) Delete(c IndexCell) error {
	var q []byte
	switch c.Kind {
	case DeltaCell:
		q = deltaQualifier(c.Bucket, c.Residual)
	case TombstoneCell:
		q = tombstoneQualifier(c.Residual)
	default:
		return fmt.Errorf("kvindex: RowUpdate.Delete of a cell of kind %d", c.Kind)
	}
	u.muts = append(u.muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableIndex, Row: u.row.Key, Qualifier: q})
	return nil
}

// Empty reports whether nothing was recorded: Update then writes nothing.
func (u *RowUpdate) Empty() bool { return len(u.muts) == 0 }

// BytesAfter is the size of the row's cells (qualifiers and values) once
// the recorded rewrite is written.
func (u *RowUpdate) BytesAfter() int64 {
	size := make(map[string]int, len(u.row.Cells))
	var after int64
	for _, c := range u.row.Cells {
		size[string(c.Qualifier)] = len(c.Qualifier) + len(c.Value)
		after += int64(len(c.Qualifier) + len(c.Value))
	}
	for _, m := range u.muts {
		after -= int64(size[string(m.Qualifier)])
		size[string(m.Qualifier)] = 0
		if m.Kind == storage.Put {
			after += int64(len(m.Qualifier) + len(m.Value))
		}
	}
	return after
}

// written is the bytes of the recorded cells: row, qualifier and value of
// each put and delete.
func (u *RowUpdate) written() int64 {
	var n int64
	for _, m := range u.muts {
		n += int64(len(m.Row) + len(m.Qualifier) + len(m.Value))
	}
	return n
}

// Update reads index row row (IndexRowKey) under its lock, decodes it and
// calls fn with it and an empty RowUpdate; what fn records there is
// written, still under the lock, when fn returns nil (nothing when it
// recorded nothing). A row that cannot be decoded is an error wrapping
// ErrCorrupt, and fn is not called.
func (w *RowWriter) Update(ctx context.Context, row []byte, fn func(IndexRow, *RowUpdate) error) error {
	ix := w.ix
	return ix.updateRow(ctx, row, func(cur storage.Row) ([]storage.Mutation, error) {
		r, err := ix.DecodeIndexRow(cur)
		if err != nil {
			return nil, err
		}
		u := &RowUpdate{ix: ix, row: cur, chunks: map[uint32]int{}}
		for _, c := range r.Cells {
			if c.Kind == BaseCell {
				u.chunks[c.Bucket]++
			}
		}
		if err := fn(r, u); err != nil {
			return nil, err
		}
		return u.muts, nil
	})
}

// MergeBaseSets merges sets into index row row (IndexRowKey) under its
// lock: each set's bucket gets the union of the set and the base set the
// bucket holds, and the tombstones the row has of carried (residuals whose
// fingerprint a document carries again) are deleted, as an insert deletes
// them. It returns the bytes of the cells it put and deleted (row,
// qualifier and value).
func (w *RowWriter) MergeBaseSets(ctx context.Context, row []byte, sets []BucketSet, carried []uint64) (int64, error) {
	var written int64
	err := w.Update(ctx, row, func(r IndexRow, u *RowUpdate) error {
		loaded := make(map[uint32]bool, len(sets))
		for _, s := range sets {
			loaded[s.Bucket] = true
		}
		old := map[uint32][][]byte{}
		tombs := map[uint64]bool{}
		for _, c := range r.Cells {
			switch c.Kind {
			case BaseCell:
				if loaded[c.Bucket] {
					old[c.Bucket] = append(old[c.Bucket], c.Value)
				}
			case TombstoneCell:
				tombs[c.Residual] = true
			}
		}
		for _, s := range sets {
			set := s.Residuals
			if len(old[s.Bucket]) > 0 {
				var have []uint64
				for _, v := range old[s.Bucket] {
					var err error
					if have, err = storage.DecodeBaseSet(have, v, r.ResidualBits); err != nil {
						return fmt.Errorf("%w: row %x bucket %d: %v", ErrCorrupt, row, s.Bucket, err)
					}
				}
				set = append(slices.Clone(set), have...)
				slices.Sort(set)
				set = slices.Compact(set)
			}
			if err := u.SetBaseSet(s.Bucket, set); err != nil {
				return err
			}
		}
		for _, res := range carried {
			if tombs[res] {
				if err := u.Delete(IndexCell{Kind: TombstoneCell, Residual: res}); err != nil {
					return err
				}
			}
		}
		written = u.written()
		return nil
	})
	return written, err
}

// Carried reports whether a document carries fp: whether its fp row has a
// cell. Compaction asks it before it applies a tombstone.
func (w *RowWriter) Carried(ctx context.Context, fp fingerprint.Fingerprint) (bool, error) {
	rows, err := w.ix.st.Get(ctx, []storage.RowKey{{Table: storage.TableFP, Key: FPRowKey(uint64(fp))}})
	if err != nil {
		return false, err
	}
	return len(rows[0].Cells) > 0, nil
}

// updateRow reads one index row and applies the mutations fn returns for
// it, holding the row's lock meanwhile. fn must only return mutations of
// that row (this is checked). A row key that is no index row's is an error
// wrapping ErrCorrupt.
func (ix *Index) updateRow(ctx context.Context, row []byte, fn func(storage.Row) ([]storage.Mutation, error)) error {
	t, prefix, err := ParseIndexRowKey(row, ix.bits)
	if err != nil {
		return corrupt(storage.TableIndex, row, nil, "%v", err)
	}
	unlock, err := ix.lock(ctx, lockSet{kind: lockKindRow, hashes: []uint64{rowHash(t, prefix)}})
	if err != nil {
		return err
	}
	defer unlock()
	rows, err := ix.get(ctx, []storage.RowKey{{Table: storage.TableIndex, Key: row}})
	if err != nil {
		return err
	}
	muts, err := fn(rows[0])
	if err != nil {
		return err
	}
	for _, m := range muts {
		if m.Table != storage.TableIndex || string(m.Row) != string(row) {
			return fmt.Errorf("kvindex: update of row %x made a mutation of %s row %x", row, m.Table, m.Row)
		}
	}
	return ix.mutate(ctx, muts)
}
