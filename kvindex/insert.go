package kvindex

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

// InsertMode says when an insert stores the document.
type InsertMode int

const (
	// InsertAlways stores the document and reports its near-duplicates.
	InsertAlways InsertMode = iota
	// InsertIfUnique stores the document only when no stored document is
	// within distance k; otherwise it reports which one it duplicates.
	InsertIfUnique
)

// String is "insert" or "insert-if-unique".
func (m InsertMode) String() string {
	switch m {
	case InsertAlways:
		return "insert"
	case InsertIfUnique:
		return "insert-if-unique"
	}
	return fmt.Sprintf("InsertMode(%d)", int(m))
}

// InsertResult is the outcome of inserting one document.
type InsertResult struct {
	// Stored is false when InsertIfUnique found a near-duplicate.
	Stored bool
	// Replaced: the id existed and its old version was replaced.
	Replaced bool
	// Original is the earliest (time, id) stored document within k of the
	// new one, or nil when there is none. With InsertIfUnique it is the
	// document the new one duplicates.
	Original *Hit
	// Duplicates are all stored documents within k (other than the id
	// itself), sorted like lookup hits.
	Duplicates []Hit
}

// Insert stores doc (see InsertBatch). With Config.GroupWindow set,
// concurrent calls are decided together in groups (group.go); the result is
// the one the document would get alone, arriving at its Time.
func (ix *Index) Insert(ctx context.Context, doc Document, mode InsertMode, k int) (InsertResult, error) {
	if ix.grp != nil {
		return ix.grp.insert(ctx, doc, mode, k)
	}
	return ix.insertOne(ctx, doc, mode, k)
}

func (ix *Index) insertOne(ctx context.Context, doc Document, mode InsertMode, k int) (InsertResult, error) {
	res, errs, err := ix.InsertBatch(ctx, []Document{doc}, mode, k)
	if err != nil {
		return InsertResult{}, err
	}
	if errs[0] != nil {
		return InsertResult{}, errs[0]
	}
	return res[0], nil
}

// InsertBatch checks and inserts documents. Each document is compared with
// the stored documents and with the batch's documents that come before it in
// (time, id) order, so within a batch the earliest of a group of
// near-duplicates is the original whatever the input order. Re-inserting an
// id replaces its old version (a document is never its own duplicate). A
// document with a zero Time gets the current time.
//
// Concurrent inserts of near-duplicates serialize on the rows they share, so
// exactly one of them is stored by InsertIfUnique. errs[i] is the error of
// docs[i] alone (bad id, bad attributes, id repeated in the batch); err is a
// failure of the whole call (bad k, store down), in which case nothing of the
// batch was acknowledged.
func (ix *Index) InsertBatch(ctx context.Context, docs []Document, mode InsertMode, k int) (results []InsertResult, errs []error, err error) {
	if err := ix.checkK(k); err != nil {
		return nil, nil, err
	}
	if mode != InsertAlways && mode != InsertIfUnique {
		return nil, nil, fmt.Errorf("%w: unknown insert mode %d", ErrBadDocument, mode)
	}
	results = make([]InsertResult, len(docs))
	errs = make([]error, len(docs))
	now := time.Now().UTC()
	docs = slices.Clone(docs)
	firstIdx := make(map[string]int, len(docs))
	var order []int
	for i := range docs {
		d := &docs[i]
		if d.Time.IsZero() {
			d.Time = now
		}
		d.Time = d.Time.UTC()
		d.Bands = ix.storedBands(d.Bands, d.Chars)
		if !ix.text {
			d.Text = "" // an index of format 1 or 2 has no 0x04 cells
		}
		if errs[i] = d.validate(); errs[i] != nil {
			continue
		}
		if j, dup := firstIdx[d.ID]; dup {
			errs[i] = fmt.Errorf("%w: id %q appears more than once in the batch (items %d and %d)", ErrBadDocument, d.ID, j, i)
			continue
		}
		firstIdx[d.ID] = i
		order = append(order, i)
	}
	if len(order) == 0 {
		return results, errs, nil
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := docs[a].Time.Compare(docs[b].Time); c != 0 {
			return c
		}
		if docs[a].ID < docs[b].ID {
			return -1
		}
		return 1
	})

	// Lock the ids, read their current versions, then lock every index row
	// the old and new fingerprints live in.
	idLocks := lockSet{kind: lockKindID}
	for _, i := range order {
		idLocks.hashes = append(idLocks.hashes, idHash(docs[i].ID))
	}
	unlockIDs, err := ix.lock(ctx, idLocks)
	if err != nil {
		return nil, nil, err
	}
	defer unlockIDs()
	old, oldErrs, err := ix.readDocs(ctx, docs, order)
	if err != nil {
		return nil, nil, err
	}
	// With bands (and a Confirm to judge what they find), the band rows of
	// the new documents are candidates too, so they are locked like the
	// index rows: two near-copies that could find each other through a
	// band share that band's row, and the second to lock it sees the
	// first. Old versions' band rows are locked because their cells are
	// removed.
	useBands := ix.bands && ix.cfg.Confirm != nil
	rowLocks := lockSet{kind: lockKindRow}
	var newFPs []fingerprint.Fingerprint
	var newBands []fingerprint.Bands
	var touched []uint64 // fingerprints whose fp rows this batch may change
	for _, i := range order {
		if oldErrs[i] != nil {
			errs[i] = oldErrs[i]
			continue
		}
		rowLocks.hashes = ix.appendRowHashes(rowLocks.hashes, docs[i].Fingerprint)
		rowLocks.hashes = appendBandRowHashes(rowLocks.hashes, docs[i].Bands)
		newFPs = append(newFPs, docs[i].Fingerprint)
		newBands = append(newBands, docs[i].Bands)
		touched = append(touched, uint64(docs[i].Fingerprint))
		if o, ok := old[docs[i].ID]; ok {
			rowLocks.hashes = ix.appendRowHashes(rowLocks.hashes, o.Fingerprint)
			if ix.bands {
				rowLocks.hashes = appendBandRowHashes(rowLocks.hashes, o.Bands)
			}
			touched = append(touched, uint64(o.Fingerprint))
		}
	}
	order = slices.DeleteFunc(order, func(i int) bool { return errs[i] != nil })
	if len(order) == 0 {
		return results, errs, nil
	}
	unlockRows, err := ix.lock(ctx, rowLocks)
	if err != nil {
		return nil, nil, err
	}
	defer unlockRows()

	if !useBands {
		newBands = nil
	}
	cands, _, byBand, keyDocs, err := ix.candidates(ctx, newFPs, newBands, k, bucketWindow{0, 1<<32 - 1})
	if err != nil {
		return nil, nil, err
	}
	// Documents found in band rows join the candidates through their
	// current fingerprints (read from their docs cells): from there on they
	// are decided like index candidates, by Confirm, at their distance.
	bandDocs, err := ix.bandCandidateDocs(ctx, byBand, cands)
	if err != nil {
		return nil, nil, err
	}
	var all []uint64
	for _, c := range cands {
		all = append(all, c...)
	}
	all = append(all, touched...)
	state, err := ix.readFPs(ctx, all)
	if err != nil {
		return nil, nil, err
	}
	before := make(map[uint64]bool, len(touched))
	for _, f := range touched {
		before[f] = len(state[f]) > 0
	}

	// Decide each document in (time, id) order against the evolving state.
	var stored []int
	candOf := make(map[int][]uint64, len(order))
	keysOf := make(map[int]map[uint64]int, len(order))
	for n, i := range order {
		candOf[i] = cands[n]
		if keyDocs != nil {
			keysOf[i] = keyDocs[n]
		}
	}
	var storedDocs map[string]Document // docs cells of candidates, for Confirm
	if ix.cfg.Confirm != nil {
		if storedDocs, err = ix.candidateDocs(ctx, cands, state, bandDocs); err != nil {
			return nil, nil, err
		}
	}
	for _, i := range order {
		d := docs[i]
		fps := candOf[i]
		for _, j := range stored { // documents stored earlier in this batch
			f := uint64(docs[j].Fingerprint)
			near := bits.OnesCount64(f^uint64(d.Fingerprint)) <= k || useBands && fingerprint.SharesBand(docs[j].Bands, d.Bands)
			if near && !slices.Contains(fps, f) {
				fps = append(fps, f)
			}
		}
		var dups []Hit
		var judge func(stored Document, distance int) bool
		if ix.cfg.Confirm != nil {
			judge = ix.cfg.Confirm(d, keysOf[i], k)
		}
		for _, f := range fps {
			for _, e := range state[f] {
				if e.id == d.ID {
					continue
				}
				if ix.cfg.Confirm != nil {
					sd, ok := storedDocs[e.id]
					if !ok || sd.Fingerprint != fingerprint.Fingerprint(f) {
						sd = Document{ID: e.id, Fingerprint: fingerprint.Fingerprint(f), Time: e.time}
					}
					if !judge(sd, bits.OnesCount64(f^uint64(d.Fingerprint))) {
						continue
					}
				}
				dups = append(dups, Hit{ID: e.id, Fingerprint: fingerprint.Fingerprint(f), Distance: bits.OnesCount64(f ^ uint64(d.Fingerprint)), Time: e.time,
					Exact: f == uint64(d.Fingerprint) && d.ExactHash != 0 && e.exact == d.ExactHash})
			}
		}
		slices.SortFunc(dups, hitCmp)
		r := InsertResult{Duplicates: dups}
		for n := range dups {
			if r.Original == nil || earlier(dups[n], *r.Original) {
				h := dups[n]
				r.Original = &h
			}
		}
		r.Stored = mode == InsertAlways || len(dups) == 0
		if r.Stored {
			if o, ok := old[d.ID]; ok {
				r.Replaced = true
				state[uint64(o.Fingerprint)] = slices.DeleteFunc(state[uint64(o.Fingerprint)], func(e fpEntry) bool { return e.id == d.ID })
			}
			state[uint64(d.Fingerprint)] = append(state[uint64(d.Fingerprint)], fpEntry{id: d.ID, time: d.Time, exact: d.ExactHash})
			stored = append(stored, i)
			if storedDocs != nil {
				storedDocs[d.ID] = d
			}
		}
		results[i] = r
	}
	if len(stored) == 0 {
		ix.countInserts(results, errs)
		return results, errs, nil
	}

	// Writes, ordered so that a store without multi-row atomicity never
	// exposes a document whose fingerprint is not findable: index cells
	// first, then fp cells, then band cells, then docs; removals after
	// additions.
	var adds, removes []Mutation
	var newDocs int64
	for _, i := range stored {
		d := docs[i]
		bucket := ix.buckets.Of(d.Time)
		ts := ix.buckets.Start(bucket)
		for t, p := range ix.perms {
			v := p.Permute(d.Fingerprint)
			row := IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits)
			adds = append(adds, Mutation{Kind: Put, Table: TableIndex, Row: row, Qualifier: DeltaQualifier(bucket, p.Residual(v)), Value: []byte{}, Timestamp: ts})
			if !before[uint64(d.Fingerprint)] {
				adds = append(adds, Mutation{Kind: DeleteCell, Table: TableIndex, Row: row, Qualifier: TombstoneQualifier(p.Residual(v))})
			}
		}
	}
	for _, i := range stored {
		d := docs[i]
		adds = append(adds, Mutation{Kind: Put, Table: TableFP, Row: FPRowKey(uint64(d.Fingerprint)), Qualifier: []byte(d.ID), Value: encodeFPCell(d.Time, d.ExactHash, ix.compact)})
	}
	for _, i := range stored {
		d := docs[i]
		adds = append(adds, ix.bandPuts(d, ix.buckets.Start(ix.buckets.Of(d.Time)))...)
	}
	for _, i := range stored {
		d := docs[i]
		adds = append(adds, Mutation{Kind: Put, Table: TableDocs, Row: []byte(d.ID), Qualifier: docQualifier, Value: encodeDoc(d, ix.compact)})
		o, ok := old[d.ID]
		if !ok {
			newDocs++
			continue
		}
		if o.Fingerprint != d.Fingerprint {
			removes = append(removes, Mutation{Kind: DeleteCell, Table: TableFP, Row: FPRowKey(uint64(o.Fingerprint)), Qualifier: []byte(d.ID)})
		}
		removes = append(removes, ix.bandDeletes(o, d.Bands)...)
	}
	var fpDelta int64
	seen := make(map[uint64]bool, len(touched))
	for _, f := range touched {
		if seen[f] {
			continue
		}
		seen[f] = true
		after := len(state[f]) > 0
		switch {
		case after && !before[f]:
			fpDelta++
		case !after && before[f]:
			fpDelta--
			removes = append(removes, ix.tombstones(fingerprint.Fingerprint(f))...)
		}
	}
	muts := append(adds, removes...)
	muts = append(muts, ix.counterMuts(newDocs, fpDelta)...)
	if err := ix.mutateReleasing(ctx, muts, idLocks, rowLocks); err != nil {
		return nil, nil, err
	}
	ix.countInserts(results, errs)
	return results, errs, nil
}

func (ix *Index) countInserts(results []InsertResult, errs []error) {
	for i, r := range results {
		switch {
		case errs[i] != nil:
		case !r.Stored:
			ix.m.inserts.WithLabelValues("duplicate").Inc()
		case r.Replaced:
			ix.m.inserts.WithLabelValues("replaced").Inc()
		default:
			ix.m.inserts.WithLabelValues("stored").Inc()
		}
	}
}

func (ix *Index) appendRowHashes(dst []uint64, fp fingerprint.Fingerprint) []uint64 {
	for t, p := range ix.perms {
		dst = append(dst, rowHash(t, p.Prefix(p.Permute(fp))))
	}
	return dst
}

func (ix *Index) tombstones(fp fingerprint.Fingerprint) []Mutation {
	muts := make([]Mutation, 0, len(ix.perms))
	for t, p := range ix.perms {
		v := p.Permute(fp)
		muts = append(muts, Mutation{Kind: Put, Table: TableIndex, Row: IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits), Qualifier: TombstoneQualifier(p.Residual(v)), Value: []byte{}})
	}
	return muts
}

func (ix *Index) counterMuts(docs, fps int64) []Mutation {
	var muts []Mutation
	if docs != 0 {
		muts = append(muts, Mutation{Kind: Add, Table: TableMeta, Row: countersRow, Qualifier: qualDocuments, Delta: docs})
	}
	if fps != 0 {
		muts = append(muts, Mutation{Kind: Add, Table: TableMeta, Row: countersRow, Qualifier: qualFingerprints, Delta: fps})
	}
	return muts
}

// readDocs reads the stored versions of the documents' ids. A corrupt docs
// cell is an error of that document alone.
func (ix *Index) readDocs(ctx context.Context, docs []Document, order []int) (map[string]Document, map[int]error, error) {
	keys := make([]RowKey, len(order))
	for n, i := range order {
		keys[n] = RowKey{TableDocs, []byte(docs[i].ID)}
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

// candidateDocs reads the docs cells of every document on the candidate
// fingerprints (one multi-get), for Config.Confirm; known documents (read
// already) are not read again. A missing or corrupt cell leaves its id out:
// Confirm then sees the bare fingerprint.
func (ix *Index) candidateDocs(ctx context.Context, cands [][]uint64, state map[uint64][]fpEntry, known map[string]Document) (map[string]Document, error) {
	seen := map[string]bool{}
	for id := range known {
		seen[id] = true
	}
	var keys []RowKey
	for _, c := range cands {
		for _, f := range c {
			for _, e := range state[f] {
				if !seen[e.id] {
					seen[e.id] = true
					keys = append(keys, RowKey{TableDocs, []byte(e.id)})
				}
			}
		}
	}
	out := make(map[string]Document, len(keys)+len(known))
	for id, d := range known {
		out[id] = d
	}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if len(row.Cells) == 0 {
			continue
		}
		if d, err := ix.decodeDocRow(row); err == nil {
			out[d.ID] = d
		}
	}
	return out, nil
}

// bandCandidateDocs reads the docs cells of the documents found in band
// rows (one multi-get) and adds each one's fingerprint to its query's
// candidates (kept sorted and distinct). A missing docs cell (deleted
// since) or a corrupt one drops the candidate.
func (ix *Index) bandCandidateDocs(ctx context.Context, byBand [][]string, cands [][]uint64) (map[string]Document, error) {
	var keys []RowKey
	seen := map[string]bool{}
	for _, ids := range byBand {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				keys = append(keys, RowKey{TableDocs, []byte(id)})
			}
		}
	}
	out := make(map[string]Document, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if len(row.Cells) == 0 {
			continue
		}
		if d, err := ix.decodeDocRow(row); err == nil {
			out[d.ID] = d
		}
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
	keys := make([]RowKey, 0, len(ids))
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return nil, err
		}
		keys = append(keys, RowKey{TableDocs, []byte(id)})
	}
	out := make(map[string]Document, len(ids))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if len(row.Cells) == 0 {
			continue
		}
		d, err := ix.decodeDocRow(row)
		if err != nil {
			return nil, err
		}
		out[d.ID] = d
	}
	return out, nil
}

func (ix *Index) decodeDocRow(row Row) (Document, error) {
	for _, c := range row.Cells {
		if string(c.Qualifier) == string(docQualifier) {
			d, err := decodeDoc(string(row.Key), c.Value)
			if err != nil {
				ix.m.corrupt.Inc()
				return Document{}, corrupt(TableDocs, row.Key, c.Qualifier, "%v", err)
			}
			return d, nil
		}
	}
	ix.m.corrupt.Inc()
	return Document{}, corrupt(TableDocs, row.Key, docQualifier, "docs row without its cell")
}

// Get returns the stored document with the id, or an error wrapping
// ErrNotFound.
func (ix *Index) Get(ctx context.Context, id string) (Document, error) {
	if err := ValidateID(id); err != nil {
		return Document{}, err
	}
	rows, err := ix.get(ctx, []RowKey{{TableDocs, []byte(id)}})
	if err != nil {
		return Document{}, err
	}
	if len(rows[0].Cells) == 0 {
		return Document{}, fmt.Errorf("%w: document %q", ErrNotFound, id)
	}
	return ix.decodeDocRow(rows[0])
}

// Delete removes the document with the id. Its fingerprint leaves the index
// rows (as tombstones, until compaction folds them) when no other document
// carries it.
func (ix *Index) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	unlockID, err := ix.lock(ctx, lockSet{kind: lockKindID, hashes: []uint64{idHash(id)}})
	if err != nil {
		return err
	}
	defer unlockID()
	d, err := ix.Get(ctx, id)
	if err != nil {
		return err
	}
	rowHashes := ix.appendRowHashes(nil, d.Fingerprint)
	if ix.bands {
		rowHashes = appendBandRowHashes(rowHashes, d.Bands)
	}
	unlockRows, err := ix.lock(ctx, lockSet{kind: lockKindRow, hashes: rowHashes})
	if err != nil {
		return err
	}
	defer unlockRows()
	state, err := ix.readFPs(ctx, []uint64{uint64(d.Fingerprint)})
	if err != nil {
		return err
	}
	others := slices.DeleteFunc(state[uint64(d.Fingerprint)], func(e fpEntry) bool { return e.id == id })
	muts := []Mutation{
		// A docs row has one cell: deleting the cell (not the row) avoids a
		// range deletion, which the embedded store pays for on every later read.
		{Kind: DeleteCell, Table: TableDocs, Row: []byte(id), Qualifier: docQualifier},
		{Kind: DeleteCell, Table: TableFP, Row: FPRowKey(uint64(d.Fingerprint)), Qualifier: []byte(id)},
	}
	muts = append(muts, ix.bandDeletes(d, nil)...)
	var fpDelta int64
	if len(others) == 0 {
		fpDelta = -1
		muts = append(muts, ix.tombstones(d.Fingerprint)...)
	}
	muts = append(muts, ix.counterMuts(-1, fpDelta)...)
	return ix.mutateReleasing(ctx, muts, lockSet{kind: lockKindID, hashes: []uint64{idHash(id)}}, lockSet{kind: lockKindRow, hashes: rowHashes})
}
