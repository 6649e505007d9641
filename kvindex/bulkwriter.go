package kvindex

import (
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// BulkWriter builds an index's cells and writes them without lookups,
// near-duplicate checks or locks: the write path of bulk loads
// (internal/bulkload, internal/sparkjob) and of benchmarks that build an
// index directly. Its cells are byte for byte those inserts write
// (docs/FORMAT.md); its callers place fingerprints, sort, buffer and apply
// them, but never encode a cell of the index themselves. Writing without
// locks is for rows nothing else writes meanwhile (a load into rows known
// to be empty); rows that may hold data are merged under their lock with
// RowWriter. A BulkWriter is safe for concurrent use.
type BulkWriter struct{ ix *Index }

// BulkWriter returns the index's BulkWriter.
func (ix *Index) BulkWriter() *BulkWriter { return &ix.bulk }

// BucketSet is what one index row holds of one time bucket: the sorted,
// distinct residuals of its base set.
type BucketSet struct {
	Bucket    uint32
	Residuals []uint64
}

// DocCells returns the fp and docs cells of a document, unchecked (bulk
// load has deduplicated ids and checked documents itself), and, when the
// index has bands and the document a band signature, its band cells
// (between the fp and the docs cell, the order inserts write them in). The
// document's Time must be set. An index without bands drops the signature,
// one of format 1 or 2 the text.
func (w *BulkWriter) DocCells(d Document) ([]storage.Mutation, error) {
	ix := w.ix
	d.Time = d.Time.UTC()
	d.Bands = ix.storedBands(d.Bands, d.Chars)
	if !ix.text {
		d.Text = "" // an index of format 1 or 2 has no 0x04 cells
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	// One allocation for the slice: bulk load calls this per document.
	muts := make([]storage.Mutation, 1, 2+len(d.Bands))
	muts[0] = storage.Mutation{Kind: storage.Put, Table: storage.TableFP, Row: FPRowKey(uint64(d.Fingerprint)), Qualifier: []byte(d.ID), Value: encodeFPCell(d.Time, d.ExactHash, ix.compact)}
	muts = append(muts, ix.bandPuts(d, ix.buckets.Start(ix.buckets.Of(d.Time)))...)
	return append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableDocs, Row: []byte(d.ID), Qualifier: docQualifier, Value: encodeDoc(d, ix.compact)}), nil
}

// InsertCells returns the cells an insert of d as a new document writes,
// without the insert's lookup and locks: a delta cell in each permutation
// table's row of d's fingerprint, then DocCells. (An insert also deletes
// the tombstones of a fingerprint no document carried before; InsertCells
// leaves them.)
func (w *BulkWriter) InsertCells(d Document) ([]storage.Mutation, error) {
	ix := w.ix
	dm, err := w.DocCells(d)
	if err != nil {
		return nil, err
	}
	bucket := ix.buckets.Of(d.Time)
	ts := ix.buckets.Start(bucket)
	muts := make([]storage.Mutation, 0, len(ix.perms)+len(dm))
	for t, p := range ix.perms {
		v := p.Permute(d.Fingerprint)
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits),
			Qualifier: deltaQualifier(bucket, p.Residual(v)), Value: []byte{}, Timestamp: ts})
	}
	return append(muts, dm...), nil
}

// PutBaseSets puts the base sets of index row row (IndexRowKey) into p, a
// bucket at a time in the order of sets (increasing buckets keep the cells
// in key order): each set's chunks under their qualifiers, through
// storage.TimedCellPutter when p is one, stamped with their bucket's
// start. The row must hold nothing of these buckets (no cell is deleted).
// It returns the number of cells put and their bytes (row, qualifier and
// value).
func (w *BulkWriter) PutBaseSets(p storage.CellPutter, row []byte, sets []BucketSet) (cells int, bytes int64, err error) {
	ix := w.ix
	t, _, err := ParseIndexRowKey(row, ix.bits)
	if err != nil {
		return 0, 0, fmt.Errorf("kvindex: %w", err)
	}
	tp, timed := p.(storage.TimedCellPutter)
	rbits := 64 - ix.bits[t]
	for _, bs := range sets {
		vals, err := storage.EncodeBaseSet(bs.Residuals, rbits, ix.cfg.MaxCellBytes)
		if err != nil {
			return 0, 0, fmt.Errorf("kvindex: row %x bucket %d: %w", row, bs.Bucket, err)
		}
		for i, v := range vals {
			q := baseQualifier(bs.Bucket, i)
			if timed {
				err = tp.PutAt(row, q, v, ix.buckets.Start(bs.Bucket))
			} else {
				err = p.Put(row, q, v)
			}
			if err != nil {
				return 0, 0, err
			}
			cells++
			bytes += int64(len(row) + len(q) + len(v))
		}
	}
	return cells, bytes, nil
}

// BaseSets writes nothing itself: it builds the base sets of fingerprints
// that all fall in one time bucket, table by table (permute, sort, group by
// row), and hands the Put mutations to emit in batches of about batch
// mutations. It holds a copy of fps per table in memory, so it is for
// benchmarks, tests and one-shot builds of a fresh index; cmd/bulkload has
// its own spilling pipeline for inputs larger than memory.
func (w *BulkWriter) BaseSets(fps []uint64, bucket uint32, batch int, emit func([]storage.Mutation) error) error {
	ix := w.ix
	vs := make([]uint64, len(fps))
	var muts []storage.Mutation
	var rs []uint64
	for t, p := range ix.perms {
		for i, f := range fps {
			vs[i] = p.Permute(fingerprint.Fingerprint(f))
		}
		slices.Sort(vs)
		for i := 0; i < len(vs); {
			prefix := p.Prefix(vs[i])
			rs = rs[:0]
			j := i
			for ; j < len(vs) && p.Prefix(vs[j]) == prefix; j++ {
				rs = append(rs, p.Residual(vs[j]))
			}
			m, err := ix.baseSetMutations(IndexRowKey(nil, t, prefix, p.PrefixBits), bucket, slices.Compact(rs), 0)
			if err != nil {
				return err
			}
			muts = append(muts, m...)
			if len(muts) >= batch {
				if err := emit(muts); err != nil {
					return err
				}
				muts = nil
			}
			i = j
		}
	}
	if len(muts) > 0 {
		return emit(muts)
	}
	return nil
}

// Tombstones returns the tombstones of fp, one in each permutation table's
// row: what a delete writes when no document carries fp any more, hiding
// it from lookups until compaction folds them.
func (w *BulkWriter) Tombstones(fp fingerprint.Fingerprint) []storage.Mutation {
	return w.ix.tombstones(fp)
}

// Counters returns the mutations that add docs and fps to the index's
// document and fingerprint counters (in the counters row, on every
// format: a load adds once, so no row takes many increments).
func (w *BulkWriter) Counters(docs, fps int64) []storage.Mutation {
	return counterAdds(countersRow, docs, fps)
}

// Apply writes mutations of the index's tables (the cells above, or sorted
// cells put in batches), durable on return.
func (w *BulkWriter) Apply(ctx context.Context, muts []storage.Mutation) error {
	return w.ix.mutate(ctx, muts)
}

// baseSetMutations encodes the sorted, distinct residuals of one index row
// and bucket into base-set chunks and returns their Put mutations (chunk
// qualifiers 0..n-1), plus deletes of chunks n..oldChunks-1 when a rewrite
// leaves fewer chunks than before.
func (ix *Index) baseSetMutations(row []byte, bucket uint32, residuals []uint64, oldChunks int) ([]storage.Mutation, error) {
	t, _, err := ParseIndexRowKey(row, ix.bits)
	if err != nil {
		return nil, fmt.Errorf("kvindex: %w", err)
	}
	cells, err := storage.EncodeBaseSet(residuals, 64-ix.bits[t], ix.cfg.MaxCellBytes)
	if err != nil {
		return nil, err
	}
	ts := ix.buckets.Start(bucket)
	muts := make([]storage.Mutation, 0, len(cells))
	for i, c := range cells {
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: baseQualifier(bucket, i), Value: c, Timestamp: ts})
	}
	for i := len(cells); i < oldChunks; i++ {
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableIndex, Row: row, Qualifier: baseQualifier(bucket, i)})
	}
	return muts, nil
}
