package kvindex

// Reading documents: the stored versions an insert replaces, the
// candidates it judges, and Documents, Get and DecodeDocument for callers.

import (
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/storage"
)

// readDocs reads the stored versions of the documents' ids. A corrupt docs
// cell is an error of that document alone.
func (ix *Index) readDocs(ctx context.Context, docs []Document, order []int) (map[string]Document, map[int]error, error) {
	keys := make([]storage.RowKey, len(order))
	for n, i := range order {
		keys[n] = storage.RowKey{Table: storage.TableDocs, Key: []byte(docs[i].ID)}
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	old := make(map[string]Document)
	errs := make(map[int]error)
	for n, row := range rows {
		if len(row.Cells) == 0 {
			continue
		}
		d, err := ix.decodeDocRow(row)
		if err != nil {
			errs[order[n]] = err
			continue
		}
		old[d.ID] = d
	}
	return old, errs, nil
}

// candidateDocs reads the docs cells of every document in state (one
// multi-get); known documents (read already) are not read again. corrupt
// lists the ids whose docs cell does not decode.
func (ix *Index) candidateDocs(ctx context.Context, state map[uint64][]fpEntry, known map[string]Document) (docs map[string]Document, corrupt map[string]bool, err error) {
	seen := map[string]bool{}
	for id := range known {
		seen[id] = true
	}
	var keys []storage.RowKey
	for _, es := range state {
		for _, e := range es {
			if !seen[e.id] {
				seen[e.id] = true
				keys = append(keys, storage.RowKey{Table: storage.TableDocs, Key: []byte(e.id)})
			}
		}
	}
	out, corrupt, err := ix.readDocRows(ctx, keys, false)
	if err != nil {
		return nil, nil, err
	}
	for id, d := range known {
		out[id] = d
	}
	return out, corrupt, nil
}

// bandCandidateDocs reads the docs cells of the documents found in band
// rows (one multi-get) and adds each one's fingerprint to its query's
// candidates (kept sorted and distinct). A missing docs cell (deleted
// since) or a corrupt one drops the candidate.
func (ix *Index) bandCandidateDocs(ctx context.Context, byBand [][]string, cands [][]uint64) (map[string]Document, error) {
	var keys []storage.RowKey
	seen := map[string]bool{}
	for _, ids := range byBand {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				keys = append(keys, storage.RowKey{Table: storage.TableDocs, Key: []byte(id)})
			}
		}
	}
	out, err := ix.docsByKey(ctx, keys, false)
	if err != nil {
		return nil, err
	}
	for n, ids := range byBand {
		for _, id := range ids {
			if d, ok := out[id]; ok && !slices.Contains(cands[n], uint64(d.Fingerprint)) {
				cands[n] = append(cands[n], uint64(d.Fingerprint))
			}
		}
		slices.Sort(cands[n])
	}
	return out, nil
}

// Documents returns the stored documents with the given ids, read in one
// multi-get; ids not stored are absent from the map. A corrupt docs cell is
// an error (wrapping ErrCorrupt).
func (ix *Index) Documents(ctx context.Context, ids []string) (map[string]Document, error) {
	keys := make([]storage.RowKey, 0, len(ids))
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return nil, err
		}
		keys = append(keys, storage.RowKey{Table: storage.TableDocs, Key: []byte(id)})
	}
	return ix.docsByKey(ctx, keys, true)
}

// docsByKey reads the docs rows of keys in one multi-get and returns the
// documents stored there by id; a corrupt docs cell is an error when strict
// and drops its document otherwise.
func (ix *Index) docsByKey(ctx context.Context, keys []storage.RowKey, strict bool) (map[string]Document, error) {
	out, _, err := ix.readDocRows(ctx, keys, strict)
	return out, err
}

// readDocRows is docsByKey that also returns, when not strict, the ids
// whose docs cell is there but does not decode.
func (ix *Index) readDocRows(ctx context.Context, keys []storage.RowKey, strict bool) (docs map[string]Document, corrupt map[string]bool, err error) {
	out := make(map[string]Document, len(keys))
	if len(keys) == 0 {
		return out, nil, nil
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	for _, row := range rows {
		if len(row.Cells) == 0 {
			continue
		}
		d, err := ix.decodeDocRow(row)
		if err != nil {
			if strict {
				return nil, nil, err
			}
			if corrupt == nil {
				corrupt = map[string]bool{}
			}
			corrupt[string(row.Key)] = true
			continue
		}
		out[d.ID] = d
	}
	return out, corrupt, nil
}

// committed drops from rows (fp-row entries by fingerprint) the entries
// whose document is not committed. A document's docs cell is its commit
// record: an insert writes it after the index, fp and band cells that lead
// to it, and a delete removes it before them, so an fp entry is a
// document only while the docs cell of its id exists and carries its
// fingerprint. Without one the entry is an insert that wrote its first
// cells and was not acknowledged (its docs write failed: the 503 asks for
// a retry), or one whose cells are being written right now by a holder of
// the rows' locks; with another fingerprint, a replace whose removal of
// the old fp cell is in flight or failed. Checks and inserts read through
// this rule (LookupDocuments and inserts through dropUncommitted with the
// docs they read anyway), so they see the same documents. Entries for
// which keep is false are dropped first, unread. On a store whose Mutate
// is atomic (storage.AtomicMutator) every entry is committed and nothing
// is read. A docs cell that does not decode keeps its entry (the fault is
// the cell's, reported where it is read).
func (ix *Index) committed(ctx context.Context, rows map[uint64][]fpEntry, keep func(fpEntry) bool) error {
	for f, es := range rows {
		rows[f] = slices.DeleteFunc(es, func(e fpEntry) bool { return !keep(e) })
	}
	if ix.atomic {
		return nil
	}
	var keys []storage.RowKey
	seen := map[string]bool{}
	for _, es := range rows {
		for _, e := range es {
			if !seen[e.id] {
				seen[e.id] = true
				keys = append(keys, storage.RowKey{Table: storage.TableDocs, Key: []byte(e.id)})
			}
		}
	}
	// The fingerprint each id's docs cell carries; ok false for a cell
	// that does not decode.
	type carried struct {
		fp uint64
		ok bool
	}
	have := make(map[string]carried, len(keys))
	if len(keys) > 0 {
		docs, err := ix.get(ctx, keys)
		if err != nil {
			return err
		}
		for _, row := range docs {
			for _, c := range row.Cells {
				if string(c.Qualifier) == string(docQualifier) {
					f, ok := docCellFingerprint(c.Value)
					have[string(row.Key)] = carried{f, ok}
				}
			}
		}
	}
	ix.dropUncommitted(rows, func(id string) (uint64, bool, bool) {
		c, found := have[id]
		return c.fp, found, c.ok
	})
	return nil
}

// dropUncommitted removes from rows the entries whose document is not
// committed (see committed). carried reports the docs cell of an id:
// found false when there is none, ok false when it does not decode (the
// entry is kept), else the fingerprint it carries.
func (ix *Index) dropUncommitted(rows map[uint64][]fpEntry, carried func(id string) (fp uint64, found, ok bool)) {
	for f, es := range rows {
		rows[f] = slices.DeleteFunc(es, func(e fpEntry) bool {
			fp, found, ok := carried(e.id)
			if found && (!ok || fp == f) {
				return false
			}
			ix.m.uncommitted.Inc()
			return true
		})
	}
}

// DecodeDocument decodes a docs-table row (for tools that scan it).
func (ix *Index) DecodeDocument(row storage.Row) (Document, error) { return ix.decodeDocRow(row) }

func (ix *Index) decodeDocRow(row storage.Row) (Document, error) {
	for _, c := range row.Cells {
		if string(c.Qualifier) == string(docQualifier) {
			d, err := decodeDoc(string(row.Key), c.Value)
			if err != nil {
				ix.m.corrupt.Inc()
				return Document{}, corrupt(storage.TableDocs, row.Key, c.Qualifier, "%v", err)
			}
			return d, nil
		}
	}
	ix.m.corrupt.Inc()
	return Document{}, corrupt(storage.TableDocs, row.Key, docQualifier, "docs row without its cell")
}

// Get returns the stored document with the id, or an error wrapping
// ErrNotFound.
func (ix *Index) Get(ctx context.Context, id string) (Document, error) {
	if err := ValidateID(id); err != nil {
		return Document{}, err
	}
	rows, err := ix.get(ctx, []storage.RowKey{{Table: storage.TableDocs, Key: []byte(id)}})
	if err != nil {
		return Document{}, err
	}
	if len(rows[0].Cells) == 0 {
		return Document{}, fmt.Errorf("%w: document %q", ErrNotFound, id)
	}
	return ix.decodeDocRow(rows[0])
}
