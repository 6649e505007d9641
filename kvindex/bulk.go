package kvindex

import (
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// This file is the write path for bulk load and compaction: they place
// fingerprints themselves, sort residuals per row and write base sets
// directly, with no lookups and no delta cells.

// Entry is where one fingerprint lives in one table.
type Entry struct {
	Table    int
	Prefix   uint64
	Row      []byte // index row key
	Residual uint64
}

// Entries returns the T index entries of fp, table 0 first.
func (ix *Index) Entries(fp fingerprint.Fingerprint) []Entry {
	out := make([]Entry, len(ix.perms))
	for t, p := range ix.perms {
		v := p.Permute(fp)
		out[t] = Entry{Table: t, Prefix: p.Prefix(v), Row: IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits), Residual: p.Residual(v)}
	}
	return out
}

// ResidualBits is the residual width of table t.
func (ix *Index) ResidualBits(t int) int { return 64 - ix.perms[t].PrefixBits }

// NumTables is the number of permutation tables.
func (ix *Index) NumTables() int { return len(ix.perms) }

// Buckets maps document times to time buckets.
func (ix *Index) Buckets() storage.Buckets { return ix.buckets }

// BaseSetMutations encodes the sorted, distinct residuals of one index row
// and bucket into base-set chunks and returns their Put mutations (chunk
// qualifiers 0..n-1), plus deletes of chunks n..oldChunks-1 when a rewrite
// leaves fewer chunks than before.
func (ix *Index) BaseSetMutations(row []byte, bucket uint32, residuals []uint64, oldChunks int) ([]storage.Mutation, error) {
	t, _, err := ParseIndexRowKey(row, ix.bits)
	if err != nil {
		return nil, fmt.Errorf("kvindex: %w", err)
	}
	cells, err := storage.EncodeBaseSet(residuals, ix.ResidualBits(t), ix.cfg.MaxCellBytes)
	if err != nil {
		return nil, err
	}
	ts := ix.buckets.Start(bucket)
	muts := make([]storage.Mutation, 0, len(cells))
	for i, c := range cells {
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: BaseQualifier(bucket, i), Value: c, Timestamp: ts})
	}
	for i := len(cells); i < oldChunks; i++ {
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableIndex, Row: row, Qualifier: BaseQualifier(bucket, i)})
	}
	return muts, nil
}

// DocMutations returns the fp and docs cells of a document, unchecked (bulk
// load has deduplicated ids and checked documents itself), and, when the
// index has bands and the document a band signature, its band cells
// (between the fp and the docs cell, the order inserts write them in). The
// document's Time must be set. An index without bands drops the signature,
// one of format 1 or 2 the text.
func (ix *Index) DocMutations(d Document) ([]storage.Mutation, error) {
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

// CounterMutations returns the mutations that add to the document and
// fingerprint counters.
func (ix *Index) CounterMutations(docs, fps int64) []storage.Mutation {
	return ix.counterMuts(docs, fps)
}

// Apply writes mutations built by the functions above (durable on return).
func (ix *Index) Apply(ctx context.Context, muts []storage.Mutation) error {
	return ix.mutate(ctx, muts)
}

// DecodeDocument decodes a docs-table row (for tools that scan it).
func (ix *Index) DecodeDocument(row storage.Row) (Document, error) { return ix.decodeDocRow(row) }

// UpdateRow reads one index row and applies the mutations fn returns for it,
// holding the row's lock meanwhile, so that no insert or delete made through
// this Index interleaves between the read and the write. Compaction and bulk
// loads into a non-empty index use it to rewrite base sets without losing a
// delta or tombstone written meanwhile. fn must only return mutations of
// that row (this is checked).
func (ix *Index) UpdateRow(ctx context.Context, row []byte, fn func(storage.Row) ([]storage.Mutation, error)) error {
	t, prefix, err := ParseIndexRowKey(row, ix.bits)
	if err != nil {
		return fmt.Errorf("kvindex: %w", err)
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
			return fmt.Errorf("kvindex: UpdateRow of %x returned a mutation of %s row %x", row, m.Table, m.Row)
		}
	}
	return ix.mutate(ctx, muts)
}

// BaseSetsOf writes nothing itself: it builds the base sets of fingerprints
// that all fall in one time bucket, table by table (permute, sort, group by
// row), and hands the Put mutations to emit in batches of about batch
// mutations. It holds a copy of fps per table in memory, so it is for
// benchmarks, tests and one-shot builds of a fresh index; cmd/bulkload has
// its own spilling pipeline for inputs larger than memory.
func (ix *Index) BaseSetsOf(fps []uint64, bucket uint32, batch int, emit func([]storage.Mutation) error) error {
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
			m, err := ix.BaseSetMutations(IndexRowKey(nil, t, prefix, p.PrefixBits), bucket, slices.Compact(rs), 0)
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
